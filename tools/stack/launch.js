#!/usr/bin/env node
// `npm start`'s own process: package.json's script `exec`s it in place of npm's shell, so the
// SIGINT and SIGTERM npm forwards to its script reach it. It runs the stack's supervisor
// (tools/stack/main.ts, or the script given as argv[2]: the tests' fixture) as the leader of a
// process group of its own, which every child of the stack joins, and:
// - forwards SIGINT, SIGTERM and SIGHUP to it (the supervisor stops every child, then exits);
// - stops it when its own parent (npm) is gone, killed with SIGKILL included (polled ppid);
// - is watched by it through an IPC channel: the supervisor stops the stack when this process
//   is gone, however it ended (supervisor.ts);
// - once the supervisor has exited, however it ended (SIGKILL included), ends what is left of
//   its group: SIGTERM, then SIGKILL after STACK_LEFTOVER_GRACE_MS (default 15 s).
// Node built-ins only; exits with the supervisor's exit code.
const { spawn } = require('node:child_process');
const { constants } = require('node:os');
const { join, resolve } = require('node:path');

const root = join(__dirname, '..', '..');
const script = resolve(root, process.argv[2] || 'tools/stack/main.ts');
const graceMs = Number(process.env.STACK_LEFTOVER_GRACE_MS || 15_000);
const log = (line) => process.stdout.write(`[stack] ${line}\n`);

const supervisor = spawn(process.execPath, ['-r', '@swc-node/register', script], {
  cwd: root,
  stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  detached: true,
});
const running = () => supervisor.exitCode === null && supervisor.signalCode === null;

for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(signal, () => {
    if (running()) supervisor.kill(signal);
  });
}

const parent = process.ppid;
const parentWatch = setInterval(() => {
  if (process.ppid === parent) return;
  clearInterval(parentWatch);
  log(`the launcher's parent (pid ${parent}) is gone: stopping the stack`);
  if (running()) supervisor.kill('SIGTERM');
}, 500);

/** Whether any process of the group is left (EPERM: one we may not signal still exists). */
function groupAlive(pgid) {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (error) {
    return error.code === 'EPERM';
  }
}

function signalGroup(pgid, signal) {
  try {
    process.kill(-pgid, signal);
  } catch {
    // Gone meanwhile.
  }
}

supervisor.on('error', (error) => {
  clearInterval(parentWatch);
  log(`failed to start the supervisor: ${error.message}`);
  process.exitCode = 1;
});

supervisor.on('exit', (code, signal) => {
  clearInterval(parentWatch);
  const pgid = supervisor.pid;
  process.exitCode = code ?? 128 + (constants.signals[signal] ?? 0);
  if (!groupAlive(pgid)) return;
  log(
    `the supervisor (pid ${pgid}) ended (${signal ? `signal ${signal}` : `code ${code}`}) ` +
      `with processes of the stack left: SIGTERM to its group, SIGKILL in ${graceMs} ms`,
  );
  signalGroup(pgid, 'SIGTERM');
  const deadline = Date.now() + graceMs;
  const poll = setInterval(() => {
    if (!groupAlive(pgid)) {
      clearInterval(poll);
      return;
    }
    if (Date.now() < deadline) return;
    signalGroup(pgid, 'SIGKILL');
    clearInterval(poll);
  }, 100);
});
