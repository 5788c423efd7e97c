// testing.d.ts — emqlite/testing: an in-memory database on a fake clock.
import { Database, FakeClock, Queue, Job } from './index';
export { Database, FakeClock, Queue };
export function fakeClock(startMs?: number): FakeClock;
export function testDb(t?: { after(fn: () => unknown): void } | null,
                       opts?: { startMs?: number }): { db: Database; clock: FakeClock };
export function drain(queue: Queue, processor: (job: Job) => unknown,
                      opts?: { lease?: number; max?: number }): Promise<{ completed: number; failed: number }>;
