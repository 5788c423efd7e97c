'use strict';
// native.js — loads the addon built by node-gyp (build/Release, or
// build/Debug for EMQLITE_DEBUG builds); EMQLITE_ADDON names another file.
const path = require('path');
const fs = require('fs');

function load() {
  const cands = [];
  if (process.env.EMQLITE_ADDON) cands.push(path.resolve(process.env.EMQLITE_ADDON));
  const root = path.resolve(__dirname, '..');
  cands.push(path.join(root, 'build', 'Release', 'emqlite.node'));
  cands.push(path.join(root, 'build', 'Debug', 'emqlite.node'));
  for (const c of cands) {
    if (fs.existsSync(c)) return require(c);
  }
  throw new Error('emqlite: the native addon is not built (looked for ' +
                  cands.join(', ') + '); run `npm run build` in ' + root);
}

module.exports = load();
