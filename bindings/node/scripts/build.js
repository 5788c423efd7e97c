#!/usr/bin/env node
'use strict';
// build.js — `npm install`'s build of the addon, offline: node-gyp (the
// one bundled with npm, or a node-gyp on PATH) against the headers
// installed with Node itself (--nodedir=<prefix of node>, which holds
// include/node/node_api.h), so nothing is downloaded. Exits non-zero with
// a message saying what is missing.
const fs = require('fs');
const path = require('path');
const { spawnSync } = require('child_process');

const here = path.resolve(__dirname, '..');

function nodedir() {
  const cands = [];
  if (process.env.EMQLITE_NODEDIR) cands.push(process.env.EMQLITE_NODEDIR);
  if (process.env.npm_config_nodedir) cands.push(process.env.npm_config_nodedir);
  cands.push(path.resolve(path.dirname(process.execPath), '..'));
  cands.push('/usr', '/usr/local');
  for (const d of cands) {
    if (fs.existsSync(path.join(d, 'include', 'node', 'node_api.h')) &&
        fs.existsSync(path.join(d, 'include', 'node', 'common.gypi'))) return d;
  }
  return null;
}

function nodeGyp() {
  const cands = [];
  if (process.env.npm_config_node_gyp) cands.push(process.env.npm_config_node_gyp);
  const prefix = path.resolve(path.dirname(process.execPath), '..');
  cands.push(path.join(prefix, 'lib', 'node_modules', 'npm', 'node_modules',
                       'node-gyp', 'bin', 'node-gyp.js'));
  cands.push('/usr/lib/node_modules/npm/node_modules/node-gyp/bin/node-gyp.js');
  cands.push('/usr/share/nodejs/node-gyp/bin/node-gyp.js');
  for (const c of cands) if (c && fs.existsSync(c)) return c;
  return null;
}

function main() {
  const dir = nodedir();
  if (!dir) {
    console.error('emqlite: no Node headers (include/node/node_api.h) ' +
                  'beside ' + process.execPath + ', in /usr or /usr/local; ' +
                  'set EMQLITE_NODEDIR to the prefix that holds them');
    process.exit(1);
  }
  const gyp = nodeGyp();
  if (!gyp) {
    console.error('emqlite: no node-gyp (npm bundles one; or install it)');
    process.exit(1);
  }
  const args = [gyp, 'rebuild', '--nodedir=' + dir];
  if (process.env.EMQLITE_DEBUG) args.push('--debug');
  const jobs = process.env.JOBS;
  if (jobs) args.push('--jobs=' + jobs);
  const r = spawnSync(process.execPath, args, { cwd: here, stdio: 'inherit' });
  if (r.status !== 0) {
    console.error('emqlite: the addon did not build (node-gyp exited ' +
                  r.status + '); it needs a C compiler, make, python3 and ' +
                  'the SQLite and xxHash headers (Debian: build-essential ' +
                  'python3 libsqlite3-dev libxxhash-dev)');
    process.exit(r.status || 1);
  }
}

main();
