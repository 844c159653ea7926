import { natsReachable, postgresReachable, DATABASE_URL, NATS_URL } from './helpers/backends.ts';

/**
 * Decides once which backends the run uses and says so. With REQUIRE_SERVICES=1 (CI) a
 * missing PostgreSQL or NATS fails the run instead of quietly falling back.
 */
export default async function setup(): Promise<void> {
  const [pgUp, natsUp] = await Promise.all([postgresReachable(), natsReachable()]);
  const required = process.env.REQUIRE_SERVICES === '1';
  if (required && (!pgUp || !natsUp)) {
    throw new Error(
      `REQUIRE_SERVICES=1 but ${[!pgUp && `PostgreSQL (${DATABASE_URL})`, !natsUp && `NATS JetStream (${NATS_URL})`].filter(Boolean).join(' and ')} unreachable`,
    );
  }
  const real = pgUp && natsUp;
  process.env.ANMPAY_TEST_REAL = real ? '1' : '0';
  console.log(
    `[anmpay tests] backends: ${real ? `real PostgreSQL (${DATABASE_URL}) + NATS JetStream (${NATS_URL}), and ` : ''}embedded PGlite + in-process bus` +
      (real ? '' : ` (real services unreachable: postgres=${pgUp} nats=${natsUp})`),
  );
}
