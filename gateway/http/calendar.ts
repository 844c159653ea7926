/**
 * Dates a request may name. `Date.parse` rolls a day the month lacks into the next one
 * (`2030-02-30` is March 2nd, `T24:00` the next day): a typo would become another date, so
 * the fields are checked against the calendar before anything is parsed.
 */
import { z } from 'zod';

/** RFC 3339 full-date. */
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
/** RFC 3339 date-time with an offset; seconds and up to 9 fraction digits optional. */
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T([01]\d|2[0-3]):[0-5]\d(?::[0-5]\d(?:\.\d{1,9})?)?(?:Z|[+-](?:[01]\d|2[0-3]):[0-5]\d)$/;

/** zod's ISO date knows the calendar (month lengths, leap years). */
const CALENDAR_DAY = z.iso.date();

function onCalendar(y: string, m: string, d: string): boolean {
  return CALENDAR_DAY.safeParse(`${y}-${m}-${d}`).success;
}

/** Whether `s` is a `YYYY-MM-DD` the calendar has (2028-02-29 yes, 2030-02-29 no). */
export function isCalendarDate(s: string): boolean {
  const m = DATE.exec(s);
  return m !== null && onCalendar(m[1]!, m[2]!, m[3]!);
}

/** Whether `s` is an RFC 3339 date-time with an offset whose date and time the calendar has. */
export function isCalendarDateTime(s: string): boolean {
  const m = DATE_TIME.exec(s);
  return m !== null && onCalendar(m[1]!, m[2]!, m[3]!);
}
