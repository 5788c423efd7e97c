#!/usr/bin/env node
'use strict';
// typecheck.js — `tsc --noEmit` over the TypeScript example
// (examples/worker.ts) against index.d.ts. Exits 0 with a message when
// TypeScript is not installed (it is a devDependency: `npm install`).
const path = require('path');
const fs = require('fs');
const { spawnSync } = require('child_process');

const here = path.resolve(__dirname, '..');
let tsc;
try {
  tsc = require.resolve('typescript/bin/tsc', { paths: [here] });
} catch (e) {
  console.log('typecheck: typescript is not installed (npm install in ' + here +
              '): skipped');
  process.exit(0);
}
const r = spawnSync(process.execPath, [tsc, '--noEmit', '-p', path.join(here, 'examples')],
  { stdio: 'inherit' });
if (r.status === 0) console.log('typecheck: tsc --noEmit passed on examples/');
process.exit(r.status === null ? 1 : r.status);
