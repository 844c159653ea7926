export * from './errors.ts';
export * from './mldsa.ts';
export * from './address.ts';
export * from './reference.ts';
export * from './tx.ts';
export * from './payout-proof.ts';
