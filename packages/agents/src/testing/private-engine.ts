import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Store } from "@perdure/engine";
import { SqliteStore, type SqliteDurability } from "@perdure/engine/sqlite";
import { formatSqliteEngineAddress } from "./engine-address.ts";

/** Options of {@link PrivateEngine.start}. */
export interface PrivateEngineOptions {
  /**
   * Durability of the stores `openStore()` returns. `process-crash-safe`
   * survives a SIGKILLed Worker but skips fsync, which keeps tests fast.
   * Other processes choose their own (see `openStoreAtAddress`).
   * @default "process-crash-safe"
   */
  durability?: SqliteDurability;
}

interface ResolvedPrivateEngineOptions {
  durability: SqliteDurability;
}

function resolvePrivateEngineOptions(options: PrivateEngineOptions): ResolvedPrivateEngineOptions {
  return { durability: options.durability ?? "process-crash-safe" };
}

/**
 * A private engine for one test: a SQLite file in a fresh temporary folder
 * that any process on this machine opens through {@link PrivateEngine.address}.
 * `stop()` closes every store it opened and deletes the folder.
 *
 * @example
 * const engine = await PrivateEngine.start();
 * after(() => engine.stop());
 * const worker = await KillableWorkerProcess.start({ entryModulePath, engineAddress: engine.address });
 * const client = new Client({ store: engine.openStore() });
 */
export class PrivateEngine {
  /** The address other processes open, `sqlite:<absolute path of the database file>`. */
  readonly address: string;
  /** Absolute path of the SQLite database file. */
  readonly databasePath: string;
  /** The temporary folder holding the database; free for test files (gates, logs). Deleted by `stop()`. */
  readonly directory: string;
  private readonly options: ResolvedPrivateEngineOptions;
  private readonly openedStores: Store[] = [];
  private isStopped = false;

  private constructor(directory: string, options: ResolvedPrivateEngineOptions) {
    this.directory = directory;
    this.databasePath = join(directory, "engine.db");
    this.address = formatSqliteEngineAddress(this.databasePath);
    this.options = options;
  }

  /** Creates the folder and the database with its schema, so the first processes do not race to create it. */
  static async start(options: PrivateEngineOptions = {}): Promise<PrivateEngine> {
    const resolved = resolvePrivateEngineOptions(options);
    const directory = mkdtempSync(join(tmpdir(), "perdure-agents-test-"));
    const engine = new PrivateEngine(directory, resolved);
    try {
      await engine.openStore().close();
    } catch (error) {
      rmSync(directory, { recursive: true, force: true });
      throw error;
    }
    return engine;
  }

  /** Opens a new connection to the database (polling for other processes' work every 20 ms); `stop()` closes it. */
  openStore(): Store {
    if (this.isStopped) throw new Error(`the private engine at ${this.address} is stopped; start another one`);
    const store = SqliteStore.open({ path: this.databasePath, durability: this.options.durability, pollIntervalMs: 20 });
    this.openedStores.push(store);
    return store;
  }

  /** Closes every store `openStore()` returned and deletes the folder. Safe to call twice. */
  async stop(): Promise<void> {
    if (this.isStopped) return;
    this.isStopped = true;
    // Closing a store twice is harmless, so stores the test closed itself need no tracking.
    const closeErrors: unknown[] = [];
    for (const store of this.openedStores.splice(0)) {
      try {
        await store.close();
      } catch (error) {
        closeErrors.push(error);
      }
    }
    rmSync(this.directory, { recursive: true, force: true });
    if (closeErrors.length > 0) throw new AggregateError(closeErrors, `could not close every store of the private engine at ${this.address}`);
  }
}
