#!/usr/bin/env node
'use strict';
// prepack.js — before `npm pack` / `npm publish`: copy the C sources the
// addon compiles (api/emqlite.h, engine/, storage/ — what
// scripts/sources.js finds in the repository) and the project's LICENSE
// into the package, so the tarball builds from source on its own, offline.
// `--clean` (postpack) removes the copies.
const fs = require('fs');
const path = require('path');

const here = path.resolve(__dirname, '..');
const top = process.env.EMQLITE_SRCDIR ? path.resolve(process.env.EMQLITE_SRCDIR)
  : path.resolve(here, '..', '..');
const dst = path.join(here, 'csrc');

if (process.argv[2] === '--clean') {
  fs.rmSync(dst, { recursive: true, force: true });
  fs.rmSync(path.join(here, 'LICENSE'), { force: true });
  process.exit(0);
}
if (!fs.existsSync(path.join(top, 'api', 'emqlite.h'))) {
  console.error('prepack: no repository at ' + top + ' (api/emqlite.h)');
  process.exit(1);
}
fs.rmSync(dst, { recursive: true, force: true });
const keep = (p) => /\.(c|h|def)$/.test(p);
for (const d of ['engine', 'storage']) {
  fs.cpSync(path.join(top, d), path.join(dst, d), {
    recursive: true,
    filter: (src) => fs.statSync(src).isDirectory() || keep(src),
  });
}
fs.mkdirSync(path.join(dst, 'api'), { recursive: true });
for (const h of ['emqlite.h', 'emqlite_protocol.h']) {
  fs.copyFileSync(path.join(top, 'api', h), path.join(dst, 'api', h));
}
if (fs.existsSync(path.join(top, 'LICENSE'))) {
  fs.copyFileSync(path.join(top, 'LICENSE'), path.join(here, 'LICENSE'));
}
console.error('prepack: copied the C sources into ' + dst);
