#!/usr/bin/env node
// Installs dependencies when node_modules is missing or older than the lockfile, so `npm start`
// and `npm test` work on a fresh clone. Uses only Node built-ins (it runs before any install).
const { existsSync, statSync } = require('node:fs');
const { join } = require('node:path');
const { execSync } = require('node:child_process');

const root = join(__dirname, '..');
const marker = join(root, 'node_modules', '.package-lock.json');
const lock = join(root, 'package-lock.json');
const stale = !existsSync(marker) || statSync(marker).mtimeMs < statSync(lock).mtimeMs;
if (stale) {
  // npm install (the lockfile's exact versions), not npm ci: see .ci/run and docs/adr/0001.
  process.stdout.write('installing dependencies (npm install)…\n');
  execSync('npm install --no-audit --no-fund', { cwd: root, stdio: 'inherit' });
}
