import { spawn } from 'node:child_process';
import { join } from 'node:path';

/**
 * Runs a benchmark that lives inside an app's own project (it may use that app's test harness,
 * which no other project may import) as a child process, and returns its report (stdout).
 */
export function runAppBenchmark(script: string): Promise<string> {
  const root = join(__dirname, '..');
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-r', '@swc-node/register', join(root, script)], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let report = '';
    child.stdout.on('data', (chunk: Buffer) => (report += chunk.toString()));
    child.on('error', reject);
    child.on('exit', (code) =>
      code === 0 ? resolve(report.trimEnd()) : reject(new Error(`${script} exited with ${code}`)),
    );
  });
}
