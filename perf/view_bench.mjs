// What hilsim view costs (issue 28), a benchmark, not a test: the biped at 1 kHz
// (config/biped-shm.yaml, every joint held by a local controller over shm) run alone and with a
// view and two headless browsers attached, alternately in one run (A B A B ...), each run the
// same length. Prints the bench's tick percentiles (its own report), its misses, the view
// process's CPU (share of one core, from /proc) and the bytes per second it sent, and the
// with/without ratios of the medians.
//   node perf/view_bench.mjs [SECONDS_PER_RUN=8] [ROUNDS=2]
// Needs a build (build/hilsim), web/node_modules and chromium (scripts/setup.sh). The browsers
// draw on this machine too: on a bench they are on the engineers' laptops, so this is the
// worst case for the bench.
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const SRC = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const BUILD = process.env.HS_BUILD_DIR || path.join(SRC, 'build');
const HILSIM = path.join(BUILD, 'hilsim');
const SECONDS = Number(process.argv[2] || 8);
const ROUNDS = Number(process.argv[3] || 2);
const require = createRequire(path.join(SRC, 'web', 'package.json'));
const puppeteer = require('puppeteer-core');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'hsview-bench-'));
const env = { ...process.env, HILSIM_CTL_DIR: tmp,
  HILSIM_CLIENT_LIB: path.join(BUILD, 'src', 'client', 'libhilsim-client.so') };
const config = path.join(SRC, 'config', 'biped-shm.yaml');
const gains = path.join(SRC, 'config', 'biped-shm.gains');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function start(cmd, args) {
  const p = spawn(cmd, args, { env, stdio: ['pipe', 'pipe', 'pipe'] });
  p.out = '';
  p.stdout.on('data', (d) => { p.out += d; });
  p.stderr.on('data', (d) => { p.out += d; });
  p.done = new Promise((r) => p.on('exit', r));
  return p;
}
async function until(fn, ms) {
  const end = Date.now() + ms;
  while (!fn()) {
    if (Date.now() > end) throw new Error('timed out');
    await sleep(50);
  }
}
const cpuTicks = (pid) => {
  const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return Number(f[11]) + Number(f[12]); // utime + stime, clock ticks
};
const HZ = 100; // USER_HZ on Linux

// Both browsers are started once, before the first run, and wait on about:blank while there
// is no view: a browser's start-up is not what is measured.
const browsers = [];
for (let i = 0; i < 2; i++) {
  const b = await puppeteer.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium', headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync',
      `--user-data-dir=${fs.mkdtempSync(path.join(tmp, 'chromium-'))}`, '--no-proxy-server',
      '--use-angle=swiftshader', '--enable-unsafe-swiftshader'],
  });
  const page = await b.newPage();
  await page.setViewport({ width: 1280, height: 860 });
  browsers.push({ b, page });
}

// One run: the bench until SIGTERM (its report covers every tick of the run), the controller
// holding from the start, and with a view: the view and both browsers on its page, three
// signals plotted, for the whole measured window.
async function round(withView, n) {
  const bench = `viewbench${process.pid}${n}`;
  const run = start(HILSIM, ['run', config, '--set', `bench.name=${bench}`]);
  const ctl = start('python3', [path.join(SRC, 'tests', 'view', 'view_controller.py'), 'hold',
    bench, gains]);
  await until(() => ctl.out.includes('holding'), 30000);
  let view, res = {};
  if (withView) {
    view = start(HILSIM, ['view', bench, '--config', config, '--port', '0']);
    await until(() => /:\d+\//.test(view.out), 20000);
    const port = Number(view.out.match(/:(\d+)\//)[1]);
    for (const { page } of browsers) {
      await page.goto(`http://127.0.0.1:${port}/`);
      await page.waitForFunction(() => window.hilsim && window.hilsim.ready, { timeout: 30000 });
      await page.evaluate(() => ['R_KNEE.tau', 'bench.worst_tick_us', 'WAIST_GYRO.x']
        .forEach((k) => window.hilsim.tick(k, true)));
    }
    await sleep(1000);
    const c0 = cpuTicks(view.pid), t0 = performance.now();
    const s0 = await browsers[0].page.evaluate(() => window.hilsim.viewStats);
    await sleep(SECONDS * 1000);
    const c1 = cpuTicks(view.pid), t1 = performance.now();
    const s1 = await browsers[0].page.evaluate(() => window.hilsim.viewStats);
    res.cpu = (100 * (c1 - c0) / HZ) / ((t1 - t0) / 1000);
    res.bytesPerS = (s1.bytes - s0.bytes) / ((t1 - t0) / 1000);
    res.framesPerS = (s1.frames - s0.frames) / ((t1 - t0) / 1000);
  } else {
    await sleep(SECONDS * 1000 + 1000);
  }
  ctl.stdin.on('error', () => {});
  ctl.stdin.write('quit\n');
  await ctl.done;
  run.kill('SIGTERM');
  await run.done;
  for (const { page } of browsers) await page.goto('about:blank');
  if (view) { view.kill('SIGTERM'); await view.done; }
  const row = run.out.split('\n').find((l) => /^tick\s+\d+/.test(l));
  const f = row.trim().split(/\s+/).map(Number); // tick count min mean p50 p99 p99.9 p99.99 max
  const head = run.out.match(/ticks (\d+)\s+overruns (\d+)\s+missed periods (\d+)/);
  return { ...res, ticks: f[1], p50: f[4], p99: f[5], p999: f[6], max: f[8],
    overruns: Number(head[2]), missed: Number(head[3]) };
}

const median = (a) => {
  const s = [...a].sort((x, y) => x - y), m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const rows = { without: [], with: [] };
for (let n = 0; n < ROUNDS; n++) {
  rows.without.push(await round(false, 2 * n));
  rows.with.push(await round(true, 2 * n + 1));
}
for (const { b } of browsers) await b.close();
fs.rmSync(tmp, { recursive: true, force: true });
const fmt = (x, d = 1) => (x === undefined ? '-' : x.toFixed(d));
console.log(`biped at 1 kHz, ${SECONDS} s measured per run (the bench's report covers its whole run), ${ROUNDS} rounds alternating; tick times in µs (the bench's own report)`);
console.log('run                      ticks    p50     p99   p99.9     max  overruns missed  view CPU %  view B/s  frames/s');
for (const k of ['without', 'with']) rows[k].forEach((r, i) => console.log(
  `${(k === 'with' ? 'view + 2 browsers' : 'no view').padEnd(18)} #${i + 1}  ${String(r.ticks).padStart(6)} ${fmt(r.p50).padStart(6)} ${fmt(r.p99).padStart(7)} ${fmt(r.p999).padStart(7)} ${fmt(r.max).padStart(7)} ${String(r.overruns).padStart(9)} ${String(r.missed).padStart(6)} ${fmt(r.cpu).padStart(11)} ${fmt(r.bytesPerS, 0).padStart(9)} ${fmt(r.framesPerS).padStart(9)}`));
for (const q of ['p50', 'p99', 'p999', 'max']) {
  const a = median(rows.without.map((r) => r[q])), b = median(rows.with.map((r) => r[q]));
  console.log(`median ${q.padEnd(5)} without ${fmt(a)} µs, with ${fmt(b)} µs: ratio ${(b / a).toFixed(3)}`);
}
