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
//   node scripts/sources.js --libs     what the addon links
//   node scripts/sources.js --root     the C tree's root
// Paths are relative to bindings/node (where binding.gyp is), '/'-separated.
//
// With EMQLITE_LIBDIR set to a folder holding a libemqlite shared library
// built from the same tree (a build's .libs/), no library source is
// compiled: the addon includes only api/ and links that library, with the
// folder as its run path. tests/node.sh sets it for its in-tree build so
// `make check` does not compile the library again; the packed tarball's
// install never sees it and builds from the sources it carries.
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

function libdir() {
  const d = process.env.EMQLITE_LIBDIR;
  if (!d) return null;
  const abs = path.resolve(d);
  if (!['libemqlite.so', 'libemqlite.dylib'].some((n) => fs.existsSync(path.join(abs, n)))) {
    throw new Error('emqlite: EMQLITE_LIBDIR=' + d + ': no libemqlite.so ' +
                    '(nor .dylib) there (a build\'s .libs/ folder)');
  }
  return abs;
}

function libs() {
  const d = libdir();
  if (d) return ['-L' + d, '-Wl,-rpath,' + d, '-lemqlite'];
  return ['-lsqlite3', '-lpthread'];
}

function sources(r) {
  if (libdir()) return [];
  const keep = 'platform_' + platform() + '.c';
  return files(r).filter((f) => f.endsWith('.c') &&
    !path.relative(r, f).startsWith('api' + path.sep) &&
    (!path.basename(f).startsWith('platform_') ||
     path.basename(f) === keep)).map(rel);
}

function includes(r) {
  if (libdir()) return [rel(path.join(r, 'api'))];
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
    : arg === '--libs' ? libs()
    : arg === '--root' ? [r] : sources(r);
  process.stdout.write(list.join('\n') + '\n');
}

module.exports = { root, sources, includes, libs, libdir, files, platform };
