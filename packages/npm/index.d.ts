// Types of the Busbar test kit (index.js).

/** Service Bus property names and values, e.g. `{ RequiresSession: true, LockDuration: "PT30S" }`. */
export type EntityProperties = Record<string, string | number | boolean>;

export type FaultKind = "server-busy" | "lock-lost" | "detach-link" | "drop-connection" | "delay";

export interface StartOptions {
  /** "memory" (default) or "file" (messages under the broker's temporary directory). */
  storage?: "memory" | "file";
  /** The emulator's Config.json as an object, or a path to one. */
  config?: object | string;
  /** More command-line arguments for `busbar`. */
  args?: string[];
}

export interface FaultOptions {
  /** How many sends or settlements ("server-busy", "lock-lost") or answers ("delay"); default 1. */
  count?: number;
  /** The AMQP condition of "detach-link" and "drop-connection", e.g. "amqp:link:detach-forced". */
  condition?: string;
  /** How late "delay" answers. */
  delayMs?: number;
}

export declare class Broker {
  readonly port: number;
  readonly amqpsPort: number;
  readonly adminPort: number;
  /** The development CA the AMQPS and https certificates are signed by. */
  readonly caFile: string;
  /** `Endpoint=sb://localhost:PORT;…;UseDevelopmentEmulator=true;` (plain AMQP). */
  readonly connectionString: string;
  /** The service's form: use with `customEndpointAddress: amqpsEndpoint` and `NODE_EXTRA_CA_CERTS=caFile`. */
  readonly productionConnectionString: string;
  /** `https://localhost:PORT`, the AMQPS listener as the SDK's `customEndpointAddress`. */
  readonly amqpsEndpoint: string;
  /** `http://127.0.0.1:PORT`: the administration API and the test controls. */
  readonly adminEndpoint: string;
  /** For `ServiceBusAdministrationClient`. */
  readonly adminConnectionString: string;
  createQueue(name: string, properties?: EntityProperties): Promise<unknown>;
  createTopic(name: string, properties?: EntityProperties): Promise<unknown>;
  createSubscription(topic: string, name: string, properties?: EntityProperties): Promise<unknown>;
  /** Removes an entity's messages (only its dead-letter queue's with `deadLetter`); resolves to how many. */
  purge(entity: string, options?: { deadLetter?: boolean }): Promise<number>;
  /** Back to the configured entities with no messages; entities created since are deleted. */
  reset(): Promise<void>;
  /** Moves the virtual clock ahead: "2h", "90s", "PT1H", or milliseconds. */
  advanceClock(by: string | number): Promise<{ now: string; offset: string }>;
  fault(entity: string, kind: FaultKind, options?: FaultOptions): Promise<void>;
  /** What the broker printed so far. */
  log(): string;
  /** SIGTERM (SIGKILL after half a second); removes the temporary directory. */
  stop(): Promise<void>;
}

/** The `busbar` binary: `BUSBAR_BIN`, else the one this package carries. */
export declare function binaryPath(): string;

/** Starts a broker on free loopback ports, resolved once it listens. */
export declare function startBusbar(options?: StartOptions): Promise<Broker>;

export interface Hooks {
  before(fn: () => unknown): void;
  after(fn: () => unknown): void;
  beforeEach(fn: () => unknown): void;
  afterEach(fn: (context?: any) => unknown): void;
}

/** The file's broker, started in `before`, reset in `beforeEach`, stopped in `after`. */
export declare function useBusbar(options?: StartOptions, hooks?: Hooks): Broker;
