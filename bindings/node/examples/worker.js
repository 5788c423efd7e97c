// worker.js — run a Worker on the queue of a file until it is drained:
//   node examples/worker.js jobs.db mail
// Every job's payload is printed with the process's pid; a payload that
// says "fail" throws, and is retried under the queue's policy.
const { Worker, Queue, QueueEvents } = require('emqlite');

const [path = 'jobs.db', name = 'mail'] = process.argv.slice(2);

async function main() {
  const events = new QueueEvents(name, { db: path });
  events.on('completed', ({ jobId }, seq) => console.log(`event #${seq}: completed ${jobId}`));
  events.on('failed', ({ jobId }, seq) => console.log(`event #${seq}: failed ${jobId}`));
  await events.waitUntilReady();
  const worker = new Worker(name, async (job) => {
    console.log(`pid ${process.pid} job ${job.id} attempt ${job.attemptsMade}: ${job.text}`);
    if (job.text.includes('fail')) throw new Error('asked to fail');
    return `done ${job.id}`;
  }, { db: path, concurrency: 2, waitTimeout: 500, defaultJobOptions: { attempts: 1 } });
  await new Promise((resolve) => worker.once('drained', resolve));
  await worker.close();
  await events.poll();
  await events.close();
  const q = new Queue(name, { db: path });
  console.log('counts', JSON.stringify(await q.getJobCounts()));
  await q.close();
}

main().catch((e) => { console.error(e); process.exit(1); });
