#!/usr/bin/env node
'use strict';
// sources.js — what binding.gyp compiles, found rather than listed: every
// .c file under storage/ and engine/ (engine/ may hold family folders), of
// the two platform files only platform()'s, not remote/ (the Valkey
// transfer, which needs hiredis), and every folder holding headers. The C
// tree is csrc/ inside an installed package (the prepack script copies it
// there) or the repository two levels up, or the tree EMQLITE_SRCDIR names
// (tests/node.sh builds a copy of the package).
//
//   node scripts/sources.js            the .c files, one per line
//   node scripts/sources.js --include  the header folders
//   node scripts/sources.js --root     the C tree's root
// Paths are relative to bindings/node (where binding.gyp is), '/'-separated.
const fs = require('fs');
const path = require('path');

const here = path.resolve(__dirname, '..');

function root() {
  const cands = [path.join(here, 'csrc'), path.resolve(here, '..', '..')];
  if (process.env.EMQLITE_SRCDIR) cands.unshift(path.resolve(process.env.EMQLITE_SRCDIR));
  for (const r of cands) {
    if (fs.existsSync(path.join(r, 'api', 'emqlite.h')) &&
        fs.existsSync(path.join(r, 'engine')) &&
        fs.existsSync(path.join(r, 'storage'))) return r;
  }
  throw new Error('emqlite: no C sources (api/emqlite.h, engine/, storage/) ' +
                  'in ' + path.join(here, 'csrc') + ' nor in ' +
                  path.resolve(here, '..', '..'));
}

function walk(dir, out) {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) walk(p, out);
    else out.push(p);
  }
  return out;
}

function files(r) {
  return ['storage', 'engine', 'api'].flatMap((d) => walk(path.join(r, d), []));
}

function rel(p) {
  return path.relative(here, p).split(path.sep).join('/');
}

// The platform layer: one of storage/platform_linux.c and platform_posix.c,
// as the library's configure picks it: EMQLITE_PLATFORM (linux or posix;
// tests/node.sh passes the build's), else linux on Linux, posix elsewhere.
function platform() {
  const name = process.env.EMQLITE_PLATFORM ||
    (process.platform === 'linux' ? 'linux' : 'posix');
  if (name !== 'linux' && name !== 'posix') {
    throw new Error('emqlite: EMQLITE_PLATFORM=' + name +
                    ': must be linux or posix (storage/platform_<name>.c)');
  }
  return name;
}

function sources(r) {
  const keep = 'platform_' + platform() + '.c';
  return files(r).filter((f) => f.endsWith('.c') &&
    !path.relative(r, f).startsWith('api' + path.sep) &&
    (!path.basename(f).startsWith('platform_') ||
     path.basename(f) === keep)).map(rel);
}

function includes(r) {
  const dirs = new Set();
  for (const f of files(r)) {
    if (f.endsWith('.h') || f.endsWith('.def')) dirs.add(path.dirname(f));
  }
  return [...dirs].sort().map(rel);
}

if (require.main === module) {
  const r = root();
  const arg = process.argv[2];
  const list = arg === '--include' ? includes(r)
    : arg === '--root' ? [r] : sources(r);
  process.stdout.write(list.join('\n') + '\n');
}

module.exports = { root, sources, includes, files, platform };
