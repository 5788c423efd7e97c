// worker.ts — a typed example, checked by `npm run typecheck` (tsc
// --noEmit): a producer, a worker with retries, queue events, lanes, a
// flow, a stream, and a test on the fake clock.
import { Queue, Worker, QueueEvents, Database, Job, StaleToken } from 'emqlite';
import { testDb, drain } from 'emqlite/testing';

interface Mail { to: string; subject: string }

async function main(path: string): Promise<void> {
  const db = new Database(path);
  const queue = new Queue('mail', { db, defaultJobOptions: { attempts: 5, backoff: { type: 'exponential', delay: 1000 } } });
  const id: string | null = await queue.add({ to: 'ada@example.com', subject: 'hi' } as Mail, { delay: 100 });
  const events = new QueueEvents('mail', { db });
  events.on('completed', ({ jobId }) => console.log('completed', jobId));
  events.on('failed', ({ jobId, failedReason }) => console.log('failed', jobId, failedReason));
  const worker = new Worker<string>('mail', async (job: Job) => {
    const mail = job.data as Mail;
    await job.updateProgress(50);
    return `sent to ${mail.to}`;
  }, { db, concurrency: 4, lease: 30000 });
  worker.on('completed', (job: Job, result: string) => console.log(job.id, result));
  worker.on('failed', (job, err, verdict) => console.log(job.id, String(err), verdict));
  const counts = await queue.getJobCounts('pending', 'dead');
  console.log(id, counts.pending, await queue.lanes());
  await queue.lane('PRT0000000000A').add('tenant job');
  await queue.addFlow({ payload: 'parent', children: [{ payload: 'a' }, { payload: 'b', queue: 'other' }] });
  const entry: string = await queue.stream('audit').append({ user: 'ada' });
  console.log(entry);
  try {
    await queue.call('complete', id, 99);
  } catch (e) {
    if (e instanceof StaleToken) console.log(e.code, e.message);
  }
  await worker.close();
  await events.close();
  await db.close();
}

async function aTest(): Promise<void> {
  const { db, clock } = testDb(null);
  const q = new Queue('mail', { db });
  await q.add('x', { delay: 5000 });
  clock.advance(5000);
  const r: { completed: number; failed: number } = await drain(q, async (job) => job.text);
  console.log(r.completed);
  await db.close();
}

main(process.argv[2] ?? ':memory:').then(aTest).catch((e: unknown) => { console.error(e); process.exit(1); });
