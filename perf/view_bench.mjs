// What hilsim view costs the bench (issue 28), a benchmark, not a test: the biped at 1 kHz
// (config/biped-shm.yaml, every joint held by a local controller over shm) run under several
// variants, alternately in one run (A B C A B C ...), each run the same length:
//   none      no view
//   clients   a view and two WebSocket clients (node processes that read the view's stream as the
//             page does: every message parsed, the signals the browsers plot taken from each
//             frame and status, the contacts from each pose, but nothing drawn). The bench's own added work (a
//             state copy 30 times a second for the root poses) is the same as with browsers; the
//             CPU competing with it is a few per cent of a core instead of two software renderers.
//   browsers  a view and two headless chromium on its page (three signals ticked), drawing with
//             SwiftShader on this machine's cores: the worst case, as on a bench the browsers are
//             on the engineers' laptops.
//   burn      (not run unless named) no view, but a process the bench never talks to taking about
//             what the view and its two clients take (HS_VIEW_BENCH_BURN per cent of one core,
//             default 6, in bursts 30 times a second): the control that tells work the view
//             causes in the bench from the CPU beside it being busy.
//   none-pinned, browsers-pinned (not run unless named): a bench with its real-time core to
//             itself, as with isolcpus: the tick thread on the last CPU (--set rt.cpu=N-1) and
//             everything else (the bench's other threads, the controller, the view, every process
//             of both browsers) on the others (taskset). browsers-pinned is compared with
//             none-pinned.
// Prints per run the bench's tick percentiles (its own report, every tick of the run, and the
// median tick of each of its phases), its
// overruns and missed periods, the view's CPU (share of one core, from /proc), the CPU of what
// runs beside it (the two clients or every process of the two browsers), the bytes per second the
// view sent, and the scheduling the bench's tick thread ran with (policy, priority and CPUs read
// from /proc during the run, with the bench's own self-audit of SCHED_FIFO and mlockall); then the
// median of each variant and its ratio against no view. Run it as root, as a bench runs (without
// CAP_SYS_NICE the tick thread runs SCHED_OTHER: the run says so and is no bench measurement).
//   node perf/view_bench.mjs [SECONDS_PER_RUN=8] [ROUNDS=2] [VARIANTS=none,clients,browsers]
//   e.g. node perf/view_bench.mjs 8 4 none,clients,browsers,none-pinned,browsers-pinned
// Needs a build (build/hilsim, or HS_BUILD_DIR), web/node_modules (scripts/setup.sh: puppeteer-core
// and the `ws` client it depends on) and chromium.
import { spawn, spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const SELF = fileURLToPath(import.meta.url);
const SRC = path.resolve(path.dirname(SELF), '..');
const require = createRequire(path.join(SRC, 'web', 'package.json'));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// ---- a WebSocket client (a child process of the benchmark: `--ws-client PORT`) ----
// Reads the view's stream as web/view.js does, without drawing: parses every message, takes from
// each frame the signals the benchmark's browsers plot (R_KNEE.q, R_KNEE.tau, WAIST_GYRO.x), the
// worst tick from the status and the contacts' vertical forces from each pose. Prints "ready"
// once it has the description and a frame, then the view's counters with every status.
async function wsClient(port) {
  let WS;
  try {
    WS = require('ws');
  } catch {
    WS = globalThis.WebSocket; // node 22 has one built in; node 20 only behind a flag
  }
  if (!WS) {
    console.error('view_bench: no WebSocket client (web/node_modules/ws: run npm ci in web/)');
    process.exit(2);
  }
  const ws = new WS(`ws://127.0.0.1:${port}/`, 'hilsim');
  const picks = []; // [array name in the frame, index]
  let ready = false, frames = 0, poses = 0, sink = 0, worst = 0;
  ws.onmessage = (ev) => {
    const text = typeof ev.data === 'string' ? ev.data : String(ev.data);
    let m;
    try { m = JSON.parse(text); } catch { return; }
    if (m.type === 'info') {
      const src = m.source;
      for (const [name, arr] of [['R_KNEE', 'q'], ['R_KNEE', 'tau']]) {
        const i = src.joints.findIndex((j) => j.name === name || j.name.endsWith(`/${name}`));
        if (i >= 0) picks.push([arr, i]);
      }
      const g = src.readings.find((r) => r.name === 'WAIST_GYRO');
      if (g) picks.push(['r', g.index]);
    } else if (m.type === 'frame') {
      frames++;
      for (const [arr, i] of picks) {
        const v = m[arr]?.[i];
        if (typeof v === 'number') sink += v;
      }
      if (!ready && picks.length) {
        ready = true;
        console.log('ready');
      }
    } else if (m.type === 'pose') {
      poses++;
      for (const c of m.contacts ?? []) sink += c[5];
    } else if (m.type === 'status') {
      const st = m.line?.match(/\bworst_tick_ns (\d+)/);
      if (st) worst = Number(st[1]) / 1000;
      console.log(JSON.stringify({ ...m.view, mine: { frames, poses, worst, sink } }));
    }
  };
  ws.onerror = (e) => { console.error(`view_bench client: ${e.message ?? e}`); process.exit(1); };
  ws.onclose = () => process.exit(0);
}

// ---- a burner (a child process: `--burn PERCENT`): no view, no socket, no shm, nothing of the
// bench's; it wakes 30 times a second, as the view and its clients do, and spins for PERCENT of
// each 33.3 ms period. It is the control for "the view makes the bench do work": CPU taken on the
// other core by something the bench never talks to.
function burn(percent) {
  const period = 1000 / 30, spin = (period * percent) / 100;
  let next = performance.now();
  const step = () => {
    const end = performance.now() + spin;
    while (performance.now() < end);
    next += period;
    setTimeout(step, Math.max(0, next - performance.now()));
  };
  console.log('ready');
  step();
}

// ---- a poller (a child process: `--poll SOCKET`): what the view asks the bench's control socket
// and nothing else: `state --json` 30 times a second (a fresh connection each time, as the view
// does) and `status` twice a second; the answers are read whole and dropped. It separates the
// work a view makes the bench do (a state copy in the tick, the answer built on its socket
// thread) from everything else a view and its readers do on the machine.
async function poll(sock) {
  const net = await import('node:net');
  const ask = (line) => new Promise((resolve) => {
    const c = net.createConnection(sock);
    let got = 0;
    c.on('data', (d) => { got += d.length; });
    c.on('error', () => resolve(0));
    c.on('close', () => resolve(got));
    // end(), not write(): node holds a lone small write back until more comes or the stream
    // ends (strace here: no write at all within seconds); the bench answers a half-closed peer.
    c.on('connect', () => c.end(`${line}\n`));
  });
  console.log('ready');
  let n = 0;
  for (let next = performance.now(); ; n++) {
    await ask('state --json');
    if (n % 15 === 0) await ask('status');
    next += 1000 / 30;
    await sleep(Math.max(0, next - performance.now()));
  }
}

if (process.argv[2] === '--ws-client') {
  await wsClient(Number(process.argv[3]));
} else if (process.argv[2] === '--poll') {
  await poll(process.argv[3]);
} else if (process.argv[2] === '--burn') {
  burn(Number(process.argv[3]));
} else {
  await main();
}

async function main() {
  const BUILD = process.env.HS_BUILD_DIR || path.join(SRC, 'build');
  const HILSIM = path.join(BUILD, 'hilsim');
  const SECONDS = Number(process.argv[2] || 8);
  const ROUNDS = Number(process.argv[3] || 2);
  // The burner's share of one core: about what the view and two WS clients take together.
  const BURN = Number(process.env.HS_VIEW_BENCH_BURN || 6);
  const VARIANTS = {
    none: { label: 'no view', base: 'none' },
    clients: { label: 'view + 2 WS clients', view: 'clients', base: 'none' },
    burn: { label: `no view, ${BURN} % burner`, burn: true, base: 'none' },
    poll: { label: 'no view, its state polls', poll: true, base: 'none' },
    browsers: { label: 'view + 2 browsers', view: 'browsers', base: 'none' },
    'none-pinned': { label: 'no view, RT CPU alone', pinned: true, base: 'none-pinned' },
    'browsers-pinned': { label: 'view + 2 browsers, RT CPU alone', view: 'browsers', pinned: true,
      base: 'none-pinned' },
  };
  const chosen = (process.argv[4] || 'none,clients,browsers').split(',').filter(Boolean);
  for (const v of chosen) {
    if (!VARIANTS[v]) {
      console.error(`view_bench: unknown variant '${v}' (${Object.keys(VARIANTS).join(', ')})`);
      process.exit(2);
    }
  }
  if (chosen.includes('clients') && !globalThis.WebSocket) {
    try {
      require.resolve('ws');
    } catch {
      console.error('view_bench: no WebSocket client for the clients variant (web/node_modules/ws: ' +
        'run npm ci in web/)');
      process.exit(2);
    }
  }
  // Every variant is compared with the no-view run of its kind, which therefore always runs.
  const order = [...new Set(chosen.flatMap((v) => [VARIANTS[v].base, v]))];
  const NCPU = os.cpus().length;
  const RT_CPU = NCPU - 1, OTHER = NCPU > 2 ? `0-${NCPU - 2}` : '0', ALL = `0-${NCPU - 1}`;
  if (order.some((v) => VARIANTS[v].pinned) && NCPU < 2) {
    console.error('view_bench: the pinned variants need two CPUs or more');
    process.exit(2);
  }
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'hsview-bench-'));
  const env = { ...process.env, HILSIM_CTL_DIR: tmp,
    HILSIM_CLIENT_LIB: path.join(BUILD, 'src', 'client', 'libhilsim-client.so') };
  const config = path.join(SRC, 'config', 'biped-shm.yaml');
  const gains = path.join(SRC, 'config', 'biped-shm.gains');

  // pin: a CPU list for taskset (it execs the command: the pid is the command's).
  function start(cmd, args, pin) {
    const p = pin ? spawn('taskset', ['-c', pin, cmd, ...args], { env, stdio: 'pipe' })
      : spawn(cmd, args, { env, stdio: 'pipe' });
    p.out = '';
    p.stdout.on('data', (d) => { p.out += d; });
    p.stderr.on('data', (d) => { p.out += d; });
    p.done = new Promise((r) => p.on('exit', r));
    return p;
  }
  async function until(fn, ms, what) {
    const end = Date.now() + ms;
    while (!fn()) {
      if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
      await sleep(50);
    }
  }
  const readProc = (p) => { try { return fs.readFileSync(p, 'utf8'); } catch { return null; } };
  // Fields of /proc/.../stat after the command name: index k is the man page's field k + 3.
  const statFields = (p) => readProc(p)?.split(') ')[1]?.split(' ');
  const cpuTicks = (pid) => {
    const f = statFields(`/proc/${pid}/stat`);
    return f ? Number(f[11]) + Number(f[12]) : 0; // utime + stime, clock ticks
  };
  const HZ = 100; // USER_HZ on Linux
  // Every process under pid (a browser and its zygote, renderers, GPU process...).
  function tree(pid) {
    const kids = new Map();
    for (const d of fs.readdirSync('/proc')) {
      if (!/^\d+$/.test(d)) continue;
      const f = statFields(`/proc/${d}/stat`);
      if (!f) continue;
      const pp = Number(f[1]);
      if (!kids.has(pp)) kids.set(pp, []);
      kids.get(pp).push(Number(d));
    }
    const out = [];
    for (let todo = [pid]; todo.length;) {
      const p = todo.pop();
      out.push(p);
      todo.push(...(kids.get(p) || []));
    }
    return out;
  }
  const ticksOf = (pids) => new Map(pids.map((p) => [p, cpuTicks(p)]));
  // CPU share of one core over the window of two ticksOf samples (a process started in between
  // counts from zero; one that ended is lost: the browsers start none during a window).
  const cpuShare = (a, b, s) =>
    (100 * [...b].reduce((sum, [p, t]) => sum + t - (a.get(p) ?? 0), 0) / HZ) / s;
  const POLICY = { 0: 'OTHER', 1: 'FIFO', 2: 'RR', 3: 'BATCH', 5: 'IDLE', 6: 'DEADLINE' };
  // How the bench's threads are scheduled right now: every thread not SCHED_OTHER (the tick
  // thread), with its priority and allowed CPUs, and the memory it has locked.
  function schedOf(pid) {
    const rt = [];
    let threads = 0, tids = [];
    try { tids = fs.readdirSync(`/proc/${pid}/task`); } catch { /* the bench has ended */ }
    for (const tid of tids) {
      const f = statFields(`/proc/${pid}/task/${tid}/stat`);
      if (!f) continue;
      threads++;
      const policy = Number(f[38]);
      if (policy === 0) continue;
      const cpus = readProc(`/proc/${pid}/task/${tid}/status`)?.match(/Cpus_allowed_list:\s*(\S+)/);
      const comm = readProc(`/proc/${pid}/task/${tid}/comm`)?.trim() ?? '?';
      rt.push(`${comm} ${POLICY[policy] ?? policy} ${f[37]} cpu ${cpus ? cpus[1] : '?'}`);
    }
    const lck = readProc(`/proc/${pid}/status`)?.match(/VmLck:\s*(\d+) kB/);
    return { threads, rt, lockedMB: lck ? Number(lck[1]) / 1024 : 0 };
  }
  // CPU ticks of the bench's threads other than its tick thread (the one SCHED_FIFO thread):
  // its control socket, CPU-time reporter, recorder... where a view's requests are answered.
  function otherThreads(pid) {
    let t = 0, tids = [];
    try { tids = fs.readdirSync(`/proc/${pid}/task`); } catch { return 0; }
    for (const tid of tids) {
      const f = statFields(`/proc/${pid}/task/${tid}/stat`);
      if (f && Number(f[38]) === 0) t += Number(f[11]) + Number(f[12]);
    }
    return t;
  }
  function pinTree(pid, cpus) {
    for (const p of tree(pid))
      spawnSync('taskset', ['-a', '-p', '-c', cpus, String(p)], { stdio: 'ignore' });
  }

  // Both browsers are started once, before the first run, and wait on about:blank while there
  // is no view: a browser's start-up is not what is measured.
  const browsers = [];
  if (order.some((v) => VARIANTS[v].view === 'browsers')) {
    const puppeteer = require('puppeteer-core');
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
      browsers.push({ b, page, pid: b.process().pid });
    }
  }

  // What reads the view: the two browsers on its page or two WebSocket clients; returns how to
  // sample the view's counters, which processes they are (for their CPU) and how to detach them.
  async function attach(kind, port, pin) {
    if (kind === 'browsers') {
      for (const { page, pid } of browsers) {
        if (pin) pinTree(pid, pin);
        await page.goto(`http://127.0.0.1:${port}/`);
        await page.waitForFunction(() => window.hilsim && window.hilsim.ready, { timeout: 30000 });
        await page.evaluate(() => ['R_KNEE.tau', 'bench.worst_tick_us', 'WAIST_GYRO.x']
          .forEach((k) => window.hilsim.tick(k, true)));
        if (pin) pinTree(pid, pin); // a renderer started for the page
      }
      return {
        stats: () => browsers[0].page.evaluate(() => window.hilsim.viewStats),
        pids: () => browsers.flatMap(({ pid }) => tree(pid)),
        detach: async () => {
          for (const { page, pid } of browsers) {
            await page.goto('about:blank');
            if (pin) pinTree(pid, ALL);
          }
        },
      };
    }
    const clients = [0, 1].map(() => start(process.execPath, [SELF, '--ws-client', String(port)],
      pin));
    await until(() => clients.every((c) => /^ready$/m.test(c.out)), 30000, 'the WS clients');
    return {
      stats: async () => {
        await until(() => /^\{.*\}\n/m.test(clients[0].out), 5000, 'a status');
        const out = clients[0].out; // whole lines only: the last may still be arriving
        const lines = out.slice(0, out.lastIndexOf('\n')).split('\n').filter((l) => l.startsWith('{'));
        return JSON.parse(lines[lines.length - 1]);
      },
      pids: () => clients.map((c) => c.pid),
      detach: async () => {
        for (const c of clients) c.kill('SIGTERM');
        await Promise.all(clients.map((c) => c.done));
      },
    };
  }

  // One run: the bench until SIGTERM (its report covers every tick of the run), the controller
  // holding from the start, and with a view: the view and its readers for the whole measured
  // window.
  async function round(variant, n) {
    const V = VARIANTS[variant];
    const pin = V.pinned ? OTHER : null;
    const bench = `viewbench${process.pid}${n}`;
    const run = start(HILSIM, ['run', config, '--set', `bench.name=${bench}`,
      ...(V.pinned ? ['--set', `rt.cpu=${RT_CPU}`] : [])], pin);
    const ctl = start('python3', [path.join(SRC, 'tests', 'view', 'view_controller.py'), 'hold',
      bench, gains], pin);
    await until(() => ctl.out.includes('holding'), 30000, 'the controller');
    let view, readers, burner, res = {};
    if (V.burn || V.poll) {
      burner = start(process.execPath, V.burn ? [SELF, '--burn', String(BURN)]
        : [SELF, '--poll', path.join(tmp, `hilsim-${bench}.ctl`)], pin);
      await until(() => /^ready$/m.test(burner.out), 30000, 'the burner');
    }
    if (V.view) {
      view = start(HILSIM, ['view', bench, '--config', config, '--port', '0'], pin);
      await until(() => /:\d+\//.test(view.out), 20000, 'the view');
      const port = Number(view.out.match(/:(\d+)\//)[1]);
      readers = await attach(V.view, port, pin);
    }
    await sleep(1000);
    const t0 = performance.now();
    const v0 = view ? cpuTicks(view.pid) : 0;
    const o0 = otherThreads(run.pid);
    const b0 = readers ? ticksOf(readers.pids()) : burner ? ticksOf([burner.pid]) : null;
    const s0 = readers ? await readers.stats() : null;
    await sleep(SECONDS * 500);
    res.sched = schedOf(run.pid);
    await sleep(SECONDS * 500);
    const s = (performance.now() - t0) / 1000;
    res.others = (100 * (otherThreads(run.pid) - o0) / HZ) / s;
    if (burner) {
      res.beside = cpuShare(b0, ticksOf([burner.pid]), s);
      burner.kill('SIGTERM');
      await burner.done;
    }
    if (readers) {
      const b1 = ticksOf(readers.pids());
      res.cpu = (100 * (cpuTicks(view.pid) - v0) / HZ) / s;
      res.beside = cpuShare(b0, b1, s);
      const s1 = await readers.stats();
      res.bytesPerS = (s1.bytes - s0.bytes) / s;
      res.framesPerS = (s1.frames - s0.frames) / s;
    }
    ctl.stdin.on('error', () => {});
    ctl.stdin.write('quit\n');
    await ctl.done;
    run.kill('SIGTERM');
    await run.done;
    if (readers) await readers.detach();
    if (view) { view.kill('SIGTERM'); await view.done; }
    const row = run.out.split('\n').find((l) => /^tick\s+\d+/.test(l));
    const head = run.out.match(/ticks (\d+)\s+overruns (\d+)\s+missed periods (\d+)/);
    if (!row || !head) throw new Error(`no tick report from the bench:\n${run.out}`);
    const f = row.trim().split(/\s+/).map(Number); // tick count min mean p50 p99 p99.9 p99.99 max
    // The tick's phases (the bench's own report): physics is ODE's step and touches nothing a
    // view reads, so if it grows as much as the whole tick, the tick is slower because the CPU
    // is, not because the bench does more.
    const phases = {};
    for (const m of run.out.matchAll(/^(wake|inputs|actuation|physics|sensors|outputs)\s+(\d+(?:\s+[\d.]+){7})\s*$/gm)) {
      const g = m[2].split(/\s+/).map(Number); // count min mean p50 p99 p99.9 p99.99 max
      phases[m[1]] = { p50: g[3], p99: g[4] };
    }
    const audit = (step) => run.out.match(new RegExp(`^\\s+${step}\\s+(.*)$`, 'm'))?.[1] ?? '?';
    return { ...res, phases, ticks: f[1], p50: f[4], p99: f[5], p999: f[6], max: f[8],
      overruns: Number(head[2]), missed: Number(head[3]),
      fifo: audit('SCHED_FIFO'), mlock: audit('mlockall'), affinity: audit('CPU affinity') };
  }

  const load0 = os.loadavg();
  const rows = Object.fromEntries(order.map((v) => [v, []]));
  let n = 0;
  for (let r = 0; r < ROUNDS; r++) for (const v of order) rows[v].push(await round(v, n++));
  for (const { b } of browsers) await b.close();
  fs.rmSync(tmp, { recursive: true, force: true });
  const load1 = os.loadavg();

  const fmt = (x, d = 1) => (x === undefined || Number.isNaN(x) ? '-' : x.toFixed(d));
  const median = (a) => {
    const s = [...a].sort((x, y) => x - y), m = s.length >> 1;
    return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
  };
  const W = Math.max(...order.map((v) => VARIANTS[v].label.length)) + 4;
  const rtKernel = readProc('/sys/kernel/realtime')?.trim() === '1' ? 'PREEMPT_RT' : 'not PREEMPT_RT';
  console.log(`biped at 1 kHz, ${SECONDS} s measured per run (the bench's report covers its whole ` +
    `run), ${ROUNDS} rounds of ${order.join(', ')} alternating; tick times in µs (the bench's own ` +
    `report)`);
  console.log(`host: ${NCPU} CPUs, kernel ${os.release()} (${rtKernel}), load average ` +
    `${fmt(load0[0], 2)} before, ${fmt(load1[0], 2)} after; running as uid ${process.getuid()}` +
    (order.some((v) => VARIANTS[v].pinned) ? `; pinned runs: tick thread on CPU ${RT_CPU}, ` +
      `everything else on ${OTHER}` : ''));
  console.log(`${'run'.padEnd(W)}  ticks    p50     p99   p99.9     max  overr missed  view CPU% ` +
    ` beside CPU%  view kB/s  frames/s  bench other threads CPU%  tick thread (seen in /proc)`);
  for (const v of order) rows[v].forEach((r, i) => console.log(
    `${`${VARIANTS[v].label} #${i + 1}`.padEnd(W)} ${String(r.ticks).padStart(6)} ` +
    `${fmt(r.p50).padStart(6)} ${fmt(r.p99).padStart(7)} ${fmt(r.p999).padStart(7)} ` +
    `${fmt(r.max).padStart(7)} ${String(r.overruns).padStart(6)} ${String(r.missed).padStart(6)} ` +
    `${fmt(r.cpu).padStart(10)} ${fmt(r.beside).padStart(12)} ${fmt(r.bytesPerS / 1000).padStart(10)} ` +
    `${fmt(r.framesPerS).padStart(9)}  ${fmt(r.others, 2).padStart(24)}  ${r.sched.rt.join(', ') || 'none: all SCHED_OTHER'}`));

  console.log(`\nmedians over ${ROUNDS} rounds, and each against the no-view runs of its kind:`);
  console.log(`${'run'.padEnd(W)}          p50            p99          p99.9            max  ` +
    'overruns missed');
  for (const v of order) {
    const base = rows[VARIANTS[v].base];
    const cells = ['p50', 'p99', 'p999', 'max'].map((q) => {
      const a = median(base.map((r) => r[q])), b = median(rows[v].map((r) => r[q]));
      return `${fmt(b).padStart(7)}${v === VARIANTS[v].base ? '       ' : ` (${(b / a).toFixed(2)})`}`;
    });
    console.log(`${VARIANTS[v].label.padEnd(W)} ${cells.join(' ')} ` +
      `${fmt(median(rows[v].map((r) => r.overruns))).padStart(9)} ` +
      `${fmt(median(rows[v].map((r) => r.missed))).padStart(6)}`);
  }

  const PH = ['wake', 'inputs', 'actuation', 'physics', 'sensors', 'outputs'];
  for (const q of ['p50', 'p99']) {
    console.log(`\nthe tick's phases, ${q} in µs (median over ${ROUNDS} rounds; each against the ` +
      'no-view runs of its kind):');
    console.log(`${'run'.padEnd(W)} ${PH.map((p) => p.padStart(16)).join('')}`);
    for (const v of order) {
      const base = rows[VARIANTS[v].base];
      const cells = PH.map((p) => {
        const a = median(base.map((r) => r.phases[p]?.[q] ?? NaN));
        const b = median(rows[v].map((r) => r.phases[p]?.[q] ?? NaN));
        return `${fmt(b, 2)}${v === VARIANTS[v].base ? '' : ` (${(b / a).toFixed(2)})`}`.padStart(16);
      });
      console.log(`${VARIANTS[v].label.padEnd(W)} ${cells.join('')}`);
    }
  }

  // How the bench ran: its own self-audit and what /proc showed during each run.
  const all = order.flatMap((v) => rows[v]);
  const same = (k) => [...new Set(all.map((r) => r[k]))];
  console.log(`\nthe bench's self-audit, every run: SCHED_FIFO ${same('fifo').join(' / ')}; ` +
    `mlockall ${same('mlock').join(' / ')}; CPU affinity ${same('affinity').join(' / ')}`);
  const locked = all.map((r) => r.sched.lockedMB);
  console.log(`seen in /proc mid-run: ${Math.min(...all.map((r) => r.sched.threads))}-` +
    `${Math.max(...all.map((r) => r.sched.threads))} threads, locked memory (VmLck) ` +
    `${fmt(Math.min(...locked))}-${fmt(Math.max(...locked))} MB`);
  if (all.some((r) => !r.sched.rt.some((t) => / FIFO /.test(t))))
    console.log('WARNING: a run had no SCHED_FIFO thread: its tick thread competed as an ordinary ' +
      'process; this is not how a bench runs (run as root or with CAP_SYS_NICE)');
  if (locked.some((x) => x === 0))
    console.log('WARNING: a run locked no memory (mlockall refused): page faults could stall ticks');
}
