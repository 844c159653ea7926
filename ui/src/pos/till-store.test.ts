import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { added, cartTotal, chargeable, createTill, decimalsOf, keyed, removed, roomFor } from './till-store.ts';

const press = (keys: string, currency = 'ANM') => [...keys].reduce((e, k) => keyed(e, k, currency), '');

describe('till keypad', () => {
  it.each([
    ['12.75', 'ANM', '12.75'],
    ['007', 'ANM', '7'],
    ['.5', 'ANM', '0.5'],
    ['1..2', 'ANM', '1.2'],
    ['1.2345678912', 'ANM', '1.234567891'],
    ['9.999', 'USD', '9.99'],
    ['12<3', 'ANM', '13'],
    ['12C4', 'ANM', '4'],
    ['1234567890123', 'ANM', '123456789012'],
  ])('%s in %s keys in %s', (keys, currency, want) => {
    expect(press(keys, currency)).toBe(want);
  });

  it('any key sequence leaves an entry the API reads as a decimal (or empty), within the currency places', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...'0123456789.<C')), fc.constantFrom('ANM', 'USD'), (keys, currency) => {
        const e = keys.reduce((x, k) => keyed(x, k, currency), '');
        expect(e === '' || /^[0-9]+(\.[0-9]*)?$/.test(e)).toBe(true);
        expect((e.split('.')[1] ?? '').length).toBeLessThanOrEqual(decimalsOf(currency));
        if (chargeable(e)) expect(Number(e)).toBeGreaterThan(0);
      }),
    );
  });

  it('zero, a bare point and nothing are not chargeable', () => {
    for (const e of ['', '0', '0.', '0.00', '.']) expect(chargeable(e)).toBe(false);
    expect(chargeable('0.01')).toBe(true);
  });

  it('a new sale gets a new sale id; a failed charge keeps the id, so a retry charges the same intent', () => {
    const t = createTill('ANM');
    const first = t.getSnapshot().context.saleId;
    t.trigger.key({ key: '5' });
    t.trigger.charging();
    t.trigger.failed({ message: 'network' });
    expect(t.getSnapshot().context.saleId).toBe(first);
    expect(t.getSnapshot().context.entry).toBe('5');
    t.trigger.newSale();
    expect(t.getSnapshot().context.saleId).not.toBe(first);
    expect(t.getSnapshot().context.entry).toBe('');
  });

  it('the cart: one currency, quantities add and drop, the total is exact in that currency\'s places', () => {
    const latte = { link: 'plink_a', title: 'Latte', amount: '3.5', currency: 'ANM' };
    const bagel = { link: 'plink_b', title: 'Bagel', amount: '0.000000001', currency: 'ANM' };
    const card = { link: 'plink_c', title: 'Card', amount: '3', currency: 'USD' };
    let cart = added(added(added([], latte), latte), bagel);
    expect(cartTotal(cart)).toEqual({ amount: '7.000000001', currency: 'ANM' });
    expect(added(cart, card)).toEqual(cart);
    cart = removed(removed(cart, 'plink_a'), 'plink_a');
    expect(cart.map((l) => l.product.link)).toEqual(['plink_b']);
    expect(cartTotal(removed(cart, 'plink_b'))).toBeNull();
    expect(cartTotal(added(added([], card), card))).toEqual({ amount: '6', currency: 'USD' });
  });

  it('a limited product goes into the cart only while units are left; a sold-out refusal keeps the cart under a new sale id', () => {
    const mug = { link: 'plink_m', title: 'Mug', amount: '10', currency: 'ANM', units_left: 2 };
    const gone = { link: 'plink_g', title: 'Gone', amount: '1', currency: 'ANM', units_left: 0 };
    const cart = added(added(added([], mug), mug), mug);
    expect(cart).toEqual([{ product: mug, quantity: 2 }]);
    expect(roomFor(cart, mug)).toBe(0);
    expect(added(cart, gone)).toEqual(cart);
    expect(roomFor([], { ...mug, units_left: null })).toBe(Infinity);
    const t = createTill('ANM');
    t.trigger.add({ product: mug });
    const first = t.getSnapshot().context.saleId;
    t.trigger.charging();
    t.trigger.refused({ message: 'Mug: none is left' });
    const c = t.getSnapshot().context;
    expect(c.saleId).not.toBe(first);
    expect(c.cart).toHaveLength(1);
    expect(c.error).toBe('Mug: none is left');
    expect(c.screen).toBe('keypad');
  });
});
