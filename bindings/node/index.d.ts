// index.d.ts — the public surface of the emqlite package (lib/index.js).
/// <reference types="node" />
import { EventEmitter } from 'events';

/** Bytes, text (UTF-8) or, for payloads, any JSON value. */
export type Bytes = Buffer | Uint8Array | string;
export type Payload = Bytes | number | boolean | object | null;
/** A verb argument: bytes, an integer, a boolean, null (absent), or an
 *  array (a repeated tail, flattened). */
export type VerbArg = Bytes | number | bigint | boolean | null | undefined | VerbArg[];
/** A wire reply. */
export type Reply = null | number | bigint | boolean | string | Buffer | Error | Reply[] |
  { [field: string]: Reply };

export interface OpenOptions {
  clock?: FakeClock;
  sync?: 'normal' | 'full';
  /** ms */
  busyTimeout?: number;
  nodeId?: number;
  readonly?: boolean;
  exclusive?: boolean;
  maxPayload?: number;
  checkpointFrames?: number;
  checksums?: boolean;
  pageSize?: number;
}

export interface Stats {
  pending: number; active: number; scheduled: number; dead: number;
  completed: number; failed: number; paused: boolean;
}

export interface TransferSummary { keys: number; commands: number; bytes: number; digest: string }

export interface Finding { severity: 'violation' | 'note'; code: string; key: string; message: string }

/** One step of a job's history (doc/HISTORY.md): times in Unix ms, delay
 *  in ms; null where the kind carries none. */
export interface HistoryEntry {
  seq: number; at: number; kind: string; queue: string; job: string;
  attempts: number | null; delay: number | null; runAt: number | null;
  error: Buffer | null; host: string | null; pid: number | null;
  worker: string | null;
}

export type HistoryLevel = 'on' | 'failures' | 'off';

export interface RetryPolicy { maxAttempts: number; backoff: string }

export interface Backoff { type: 'fixed' | 'exponential'; delay?: number; cap?: number; jitter?: number }

export interface JobPolicyOptions { attempts?: number; backoff?: Backoff | string | number }

export interface LogEvent {
  seq: number; atMs: number; queue: string; name: string; job: string;
  message: Buffer; data: { [k: string]: string } | null;
}

export interface VerbInfo {
  id: number; name: string; tier: number; kind: 'write' | 'read' | 'procedure' | 'host';
  args: { name: string; kind: string; optional: boolean; rest: boolean; words: string | null }[];
  reply: number; keys: string; summary: string;
}

export class FakeClock extends EventEmitter {
  constructor(startMs?: number);
  now(): number;
  advance(ms: number): number;
  set(ms: number): number;
}

export class Subscription {
  readonly db: Database;
  cursor: number;
  lost: number;
  poll(): Promise<LogEvent[]>;
  wait(ms: number): Promise<LogEvent[]>;
  close(): Promise<void>;
}

export class Database {
  constructor(path?: string, opts?: OpenOptions);
  readonly path: string;
  readonly clock: FakeClock | null;
  readonly closed: boolean;
  opened(): Promise<this>;
  call(verb: string, ...args: VerbArg[]): Promise<Reply>;
  mint(namespace?: string): Promise<string>;
  claimWait(q: string, leaseMs: number, timeoutMs: number): Promise<[string, number, Buffer] | null>;
  interruptWait(): void;
  setPolicy(q: string, id: string | null, policy: RetryPolicy | null): Promise<void>;
  getPolicy(q: string, id: string | null): Promise<RetryPolicy | null>;
  retryByPolicy(q: string, id: string, token: number, error: Bytes,
                fallback?: RetryPolicy | null): Promise<'scheduled' | 'dead'>;
  queues(): Promise<string[]>;
  stats(q: string): Promise<Stats>;
  history(id: string, opts?: { queue?: string | null }): Promise<HistoryEntry[]>;
  historyLevel(): Promise<HistoryLevel>;
  setHistoryLevel(level: HistoryLevel): Promise<void>;
  export(opts?: { queues?: string[] | null; bySlot?: boolean }): Promise<Buffer>;
  import(data: Bytes): Promise<TransferSummary>;
  digest(opts?: { queues?: string[] | null }): Promise<TransferSummary>;
  check(): Promise<{ violations: number; findings: Finding[] }>;
  checkpoint(): Promise<void>;
  nodeId(): Promise<number>;
  now(): number;
  subscribe(q?: string | null, after?: number): Promise<Subscription>;
  close(): Promise<void>;
  static verbs(): VerbInfo[];
}

export interface QueueOptions extends OpenOptions {
  /** A Database, or a path the queue opens (and closes): ":memory:" by default. */
  db?: Database | string;
  defaultJobOptions?: JobPolicyOptions;
}

export interface AddOptions extends JobPolicyOptions {
  id?: string;
  /** ms */
  delay?: number;
  at?: Date | number;
  group?: string;
}

export class Job {
  readonly queue: Queue;
  readonly id: string;
  readonly attemptsMade: number;
  readonly token: number;
  readonly payload: Buffer;
  readonly group: string | null;
  readonly name: string;
  readonly text: string;
  readonly data: any;
  returnvalue: unknown;
  failedReason: string | undefined;
  lost: boolean;
  updateProgress(progress: Payload): Promise<boolean>;
  log(line: Payload, keep?: number): Promise<Reply>;
  complete(result?: Payload): Promise<boolean>;
  retry(opts?: { delay?: number; maxAttempts?: number; error?: Payload }): Promise<string>;
  retryByPolicy(error: Payload): Promise<'scheduled' | 'dead'>;
  extendLock(ms: number): Promise<boolean>;
  moveToDelayed(at: Date | number): Promise<Reply>;
  inspect(): Promise<Reply>;
}

export class Lane {
  readonly queue: Queue;
  readonly group: string;
  add(payload: Payload, opts?: Omit<AddOptions, 'group' | 'delay' | 'at'>): Promise<string | null>;
  pause(): Promise<void>;
  resume(): Promise<void>;
  limit(n: number): Promise<void>;
  weight(w: number): Promise<void>;
  depth(): Promise<number>;
  drain(): Promise<number>;
  list(opts?: { offset?: number; count?: number; fromTail?: boolean }): Promise<{ id: string; score: number }[]>;
}

export class Stream {
  readonly queue: Queue;
  readonly name: string;
  append(fields: { [field: string]: Payload } | Payload[]): Promise<string>;
  read(opts?: { from?: string | null; to?: string | null; count?: number | null }):
    Promise<{ id: string; fields: Reply }[]>;
  range(from?: string, to?: string, count?: number | null): Promise<Reply>;
  length(): Promise<number>;
  trim(window: { maxlen?: number; minid?: number; exact?: boolean }): Promise<number>;
  createGroup(group: string, start?: string, mkstream?: boolean): Promise<Reply>;
  readGroup(group: string, consumer: string,
            opts?: { id?: string; count?: number | null; block?: number | null }): Promise<Reply>;
  ack(group: string, ...ids: (string | string[])[]): Promise<number>;
}

export interface FlowNode {
  payload: Payload;
  id?: string;
  queue?: string;
  policy?: 'fp' | 'id';
  children?: FlowNode[];
}

export interface FlowIds { id: string; queue: string; children: FlowIds[] }

export type JobCounts = { [name: string]: number };

export class Queue {
  constructor(name: string, opts?: QueueOptions);
  readonly name: string;
  readonly db: Database;
  call(verb: string, ...args: VerbArg[]): Promise<Reply>;
  add(payload: Payload, opts?: AddOptions): Promise<string | null>;
  addBulk(items: (Payload | { payload: Payload; id?: string })[]): Promise<(string | null)[]>;
  claim(opts?: { lease?: number }): Promise<Job | null>;
  next(opts?: { lease?: number; timeout?: number }): Promise<Job | null>;
  claimLane(opts?: { lease?: number }): Promise<Job | null>;
  claimBatch(size: number, opts?: { lease?: number }): Promise<Job[]>;
  getJob(id: string): Promise<{ [field: string]: Buffer } | null>;
  getJobState(id: string): Promise<string>;
  getJobLogs(id: string): Promise<string[] | null>;
  getJobCounts(...names: (string | string[])[]): Promise<JobCounts>;
  getStats(): Promise<Stats>;
  count(): Promise<number>;
  browse(n?: number): Promise<string[]>;
  list(set: 'pending' | 'active' | 'schedule' | 'dead',
       opts?: { offset?: number; count?: number; fromTail?: boolean }): Promise<{ id: string; score: number }[]>;
  inspect(id: string): Promise<Reply>;
  getMetrics(which: 'completed' | 'failed'): Promise<Reply>;
  pause(): Promise<void>;
  resume(): Promise<void>;
  isPaused(): Promise<boolean>;
  drain(delayed?: boolean): Promise<number>;
  obliterate(opts?: { force?: boolean; budget?: number }): Promise<void>;
  promote(batch?: number): Promise<number>;
  reap(): Promise<number>;
  remove(id: string): Promise<boolean>;
  reprocess(id: string): Promise<boolean>;
  requeueDead(batch?: number): Promise<{ requeued: number; skipped: number }>;
  updateData(id: string, payload: Payload): Promise<boolean>;
  sweep(batch?: number): Promise<Reply>;
  repeat(name: string, everyMs: number, payload: Payload, opts?: { firstIn?: number }): Promise<boolean>;
  cancelRepeat(name: string): Promise<boolean>;
  setRetryPolicy(p: JobPolicyOptions | null): Promise<void>;
  getRetryPolicy(id?: string | null): Promise<RetryPolicy | null>;
  lane(group: string): Lane;
  lanes(count?: number): Promise<{ total: number; lanes: { group: string; depth: number; paused: boolean }[] }>;
  addFlow(root: FlowNode): Promise<FlowIds>;
  getFlow(parent: string): Promise<Reply>;
  getChildrenValues(parent: string): Promise<Reply>;
  stream(name: string): Stream;
  close(): Promise<void>;
}

export interface WorkerOptions extends QueueOptions {
  queue?: Queue;
  concurrency?: number;
  lease?: number;
  extendInterval?: number;
  pumpInterval?: number;
  waitTimeout?: number;
  autorun?: boolean;
}

export type Processor<R = unknown> = (job: Job) => Promise<R> | R;

export class Worker<R = unknown> extends EventEmitter {
  constructor(name: string, processor: Processor<R>, opts?: WorkerOptions);
  readonly name: string;
  readonly queue: Queue;
  readonly db: Database;
  readonly concurrency: number;
  readonly running: boolean;
  readonly activeJobs: Job[];
  run(): Promise<void>;
  extendLeases(): Promise<number>;
  close(force?: boolean): Promise<void>;
  on(event: 'active', listener: (job: Job) => void): this;
  on(event: 'completed', listener: (job: Job, result: R) => void): this;
  on(event: 'failed', listener: (job: Job, error: unknown, verdict: 'scheduled' | 'dead') => void): this;
  on(event: 'progress', listener: (job: Job, progress: unknown) => void): this;
  on(event: 'lost', listener: (job: Job) => void): this;
  on(event: 'error', listener: (error: Error) => void): this;
  on(event: 'drained', listener: () => void): this;
  on(event: string | symbol, listener: (...args: any[]) => void): this;
}

export interface QueueEvent {
  jobId: string; name: string; seq: number; atMs: number;
  failedReason?: string; data?: unknown; delay?: number; [k: string]: unknown;
}

export class QueueEvents extends EventEmitter {
  constructor(name: string, opts?: QueueOptions & { after?: number; autorun?: boolean });
  readonly name: string;
  lastSeq: number;
  waitUntilReady(): Promise<this>;
  poll(): Promise<void>;
  run(): Promise<void>;
  close(): Promise<void>;
  on(event: 'completed' | 'failed' | 'progress' | 'delayed', listener: (ev: QueueEvent, seq: number) => void): this;
  on(event: string | symbol, listener: (...args: any[]) => void): this;
}

export class EmqError extends Error {
  readonly code: string;
  readonly rc: number;
}
export class StaleToken extends EmqError {}
export class WrongKind extends EmqError {}
export class WrongType extends EmqError {}
export class VersionFence extends EmqError {}
export class InvalidQueue extends EmqError {}
export class InvalidId extends EmqError {}
export class InvalidArgument extends EmqError {}
export class Busy extends EmqError {}
export class IOError extends EmqError {}
export class DiskFull extends EmqError {}
export class OutOfMemory extends EmqError {}
export class NotEmqlite extends EmqError {}
export class SchemaTooNew extends EmqError {}
export class Corrupt extends EmqError {}
export class TooBig extends EmqError {}
export class ReadOnly extends EmqError {}
export class CantOpen extends EmqError {}
export class Malformed extends EmqError {}
export class Internal extends EmqError {}
export class EmptyBatch extends EmqError {}
export class NotSupported extends EmqError {}
export class Locked extends EmqError {}
export class NotPaused extends EmqError {}
export class ActiveJobs extends EmqError {}
export class NotDead extends EmqError {}
export class RateLimited extends EmqError {}
export class Refused extends EmqError {}
export class NonMonotonic extends EmqError {}
export class EngineError extends EmqError {}
export class Exhausted extends EmqError {}

export function open(path?: string, opts?: OpenOptions): Promise<Database>;
export function verbs(): VerbInfo[];
export const version: string;
export const sqliteVersion: string;
export const WIRE: string;
