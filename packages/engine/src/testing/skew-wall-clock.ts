/**
 * Preload (`node --import`) that moves this process's wall clock by
 * PERDURE_TEST_CLOCK_SKEW_MS milliseconds: `Date.now()` and `new Date()` read
 * the skewed time, as on a machine whose clock is off. The monotonic clock
 * (`performance.now()`) keeps running as before, as it does on such a machine.
 */
const skewMs = Number(process.env["PERDURE_TEST_CLOCK_SKEW_MS"] ?? "0");
if (!Number.isFinite(skewMs)) throw new Error(`PERDURE_TEST_CLOCK_SKEW_MS ${String(process.env["PERDURE_TEST_CLOCK_SKEW_MS"])} is not a number`);

const RealDate = Date;
const realNow = RealDate.now.bind(RealDate);

class SkewedDate extends RealDate {
  constructor(...args: unknown[]) {
    if (args.length === 0) super(realNow() + skewMs);
    else super(...(args as [string | number | Date]));
  }

  static override now(): number {
    return realNow() + skewMs;
  }
}

globalThis.Date = SkewedDate as DateConstructor;
