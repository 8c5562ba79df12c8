/** A promise with its resolve function, for tests that hold a tool or a model call until they release it. */
export interface Deferred<TValue = void> {
  promise: Promise<TValue>;
  resolve: (value: TValue) => void;
}

export function deferred<TValue = void>(): Deferred<TValue> {
  let resolve!: (value: TValue) => void;
  const promise = new Promise<TValue>((done) => {
    resolve = done;
  });
  return { promise, resolve };
}
