import { describe, expect, it } from 'vitest';
import { isCalendarDate, isCalendarDateTime } from './calendar.ts';

// RFC 3339 §5.7: the day is bounded by the month (and year, for February); hours 00-23.
describe('dates the calendar has (RFC 3339 §5.7)', () => {
  it.each<[string, boolean]>([
    ['2030-01-31', true],
    ['2030-02-28', true],
    ['2030-02-29', false],
    ['2028-02-29', true],
    ['2000-02-29', true],
    ['2100-02-29', false],
    ['2030-04-30', true],
    ['2030-04-31', false],
    ['2030-06-31', false],
    ['2030-09-31', false],
    ['2030-11-31', false],
    ['2030-12-31', true],
    ['2030-12-32', false],
    ['2030-13-01', false],
    ['2030-00-01', false],
    ['2030-01-00', false],
    ['2030-1-01', false],
    ['2030-01-01T00:00:00Z', false],
  ])('date %s: %s', (s, ok) => {
    expect(isCalendarDate(s)).toBe(ok);
  });

  it.each<[string, boolean]>([
    ['2030-02-28T23:59:59Z', true],
    ['2030-02-28T23:59Z', true],
    ['2030-02-28T23:59:59.123456789+05:30', true],
    ['2028-02-29T00:00:00-08:00', true],
    ['2030-02-29T00:00:00Z', false],
    ['2030-02-30T10:00:00Z', false],
    ['2030-04-31T10:00:00Z', false],
    ['2030-02-28T24:00:00Z', false],
    ['2030-02-28T23:60:00Z', false],
    ['2030-02-28T23:59:60Z', false],
    ['2030-02-28T10:00:00+24:00', false],
    ['2030-02-28T10:00:00', false],
    ['2030-02-28T10:00:00.1234567890Z', false],
  ])('date-time %s: %s', (s, ok) => {
    expect(isCalendarDateTime(s)).toBe(ok);
  });
});
