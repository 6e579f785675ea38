// hilsim view: the page. One WebSocket to the view process brings the bench description
// ("info"), its status twice a second, the newest state at the display rate ("frame"), the
// root poses ("pose") and the live scenario's timeline when it changed ("scenario");
// the scene and the plots take the newest frame once per animation frame, never more.
import * as THREE from 'three';
import { OrbitControls } from 'three/examples/jsm/controls/OrbitControls.js';
import URDFLoader from 'urdf-loader';
import uPlot from 'uplot';

const $ = (id) => document.getElementById(id);
const params = new URLSearchParams(location.search);
const token = params.get('token');
const PLOT_WINDOW_S = 20;

// Test and debugging hooks (the browser tests read them; nothing here depends on them).
const hs = (window.hilsim = {
  info: null, status: null, lastFrame: null, frames: 0, applied: 0, drawn: 0,
  robots: [], ghosts: [], forceArrows: [], contactArrows: [], drawLog: [], ready: false,
  plots: new Map(), messages: [], axisLabels: new Map(),
  jointValue: (name, ghost) => {
    for (const r of ghost ? hs.ghosts : hs.robots) {
      const j = r.robot.joints[name];
      if (j) return j.angle;
    }
    return undefined;
  },
  // A link's drawn origin in hilsim's world frame (z up, metres), as the scene places it.
  linkWorld: (name, ghost) => {
    const short = name.slice(name.lastIndexOf('/') + 1);
    for (const r of ghost ? hs.ghosts : hs.robots) {
      if (name.includes('/') && !name.startsWith(`${r.model.name}/`)) continue;
      const l = r.robot.links[short];
      if (!l) continue;
      r.robot.updateMatrixWorld(true);
      const p = l.getWorldPosition(new THREE.Vector3());
      return world.worldToLocal(p).toArray();
    }
    return undefined;
  },
  pose: null, poses: 0,
  // The contact arrows drawn now: the point each points at (hilsim's world frame, m) and its
  // force (N).
  contacts: () => (contactGroup.visible ? hs.contactArrows.filter((a) => a.visible)
    .map((a) => ({ p: a.userData.point, newtons: a.userData.newtons })) : []),
  // Every mesh drawn (hs.meshes counts them): its file, its link, whether it shows, its
  // bounding box in hilsim's world frame (m) as drawn now, and its colour (sRGB) and opacity.
  meshBoxes: () => {
    world.updateMatrixWorld(true);
    const toWorld = world.matrixWorld.clone().invert();
    const out = [];
    for (const r of [...hs.robots, ...hs.ghosts])
      r.robot.traverse((o) => {
        if (!o.isMesh || !o.userData.meshUrl) return;
        let link = o.parent;
        while (link && !link.isURDFLink) link = link.parent;
        let shown = true;
        for (let a = o; a; a = a.parent) shown = shown && a.visible;
        const b = new THREE.Box3().setFromObject(o).applyMatrix4(toWorld);
        out.push({ model: r.model.name, url: o.userData.meshUrl, link: link?.name, shown,
          min: b.min.toArray(), max: b.max.toArray(),
          color: `#${o.material.color.getHexString()}`, opacity: o.material.opacity,
          transparent: o.material.transparent });
      });
    return out;
  },
  // Shows or hides the meshes loaded from files whose URL contains part (the tests compare the
  // pixels with and without them).
  showMeshes: (part, on) => {
    for (const r of hs.robots)
      r.robot.traverse((o) => {
        if (o.isMesh && o.userData.meshUrl?.includes(part)) o.visible = on;
      });
  },
  // The canvas rectangle (pixels, y down) the meshes from files whose URL contains part cover.
  meshScreenRect: (part) => {
    scene.updateMatrixWorld(true);
    const box = new THREE.Box3();
    for (const r of hs.robots)
      r.robot.traverse((o) => {
        if (o.isMesh && o.userData.meshUrl?.includes(part)) box.expandByObject(o);
      });
    if (box.isEmpty()) return null;
    const w = canvas.width, h = canvas.height, v = new THREE.Vector3();
    let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
    for (let i = 0; i < 8; i++) {
      v.set(i & 1 ? box.max.x : box.min.x, i & 2 ? box.max.y : box.min.y,
        i & 4 ? box.max.z : box.min.z).project(camera);
      const x = ((v.x + 1) / 2) * w, y = ((1 - v.y) / 2) * h;
      x0 = Math.min(x0, x); x1 = Math.max(x1, x); y0 = Math.min(y0, y); y1 = Math.max(y1, y);
    }
    return [x0, y0, x1, y1];
  },
  send: (obj) => send(obj),
  tick: (key, on) => setSignal(key, on),
});

// ---- scene ----
const canvas = $('scene');
const renderer = new THREE.WebGLRenderer({ canvas, antialias: true, preserveDrawingBuffer: true });
renderer.setPixelRatio(Math.min(window.devicePixelRatio, 2));
const scene = new THREE.Scene();
scene.background = new THREE.Color(0xdfe4ea);
const camera = new THREE.PerspectiveCamera(45, 1, 0.02, 100);
camera.position.set(1.25, 1.0, 1.55);
const controls = new OrbitControls(camera, canvas);
controls.target.set(0, 0.5, 0);
controls.update();
scene.add(new THREE.HemisphereLight(0xffffff, 0x667788, 2.0));
const sun = new THREE.DirectionalLight(0xffffff, 1.6);
sun.position.set(3, 6, 2);
scene.add(sun);
const grid = new THREE.GridHelper(6, 24, 0x556677, 0x99a4b0);
scene.add(grid);
const floor = new THREE.Mesh(new THREE.PlaneGeometry(6, 6),
  new THREE.MeshLambertMaterial({ color: 0xc9d0d8 }));
floor.rotation.x = -Math.PI / 2;
floor.position.y = -0.001;
scene.add(floor);
// hilsim's world is z-up (as URDF); three.js is y-up.
const world = new THREE.Group();
world.rotation.x = -Math.PI / 2;
scene.add(world);

function resize() {
  const w = canvas.clientWidth, h = canvas.clientHeight;
  if (canvas.width !== Math.floor(w * renderer.getPixelRatio()) ||
      canvas.height !== Math.floor(h * renderer.getPixelRatio())) {
    renderer.setSize(w, h, false);
    camera.aspect = w / Math.max(h, 1);
    camera.updateProjectionMatrix();
  }
}

// Both sides: a mesh whose faces are wound inwards (some VRML and STL exports) still shows.
const robotMaterial = new THREE.MeshPhongMaterial({ color: 0x4f7cac, shininess: 40,
  side: THREE.DoubleSide });
const staticMaterial = new THREE.MeshPhongMaterial({ color: 0xb0b7bf, side: THREE.DoubleSide });

const whatifMaterial = new THREE.MeshPhongMaterial({ color: 0xe8772e, transparent: true,
  opacity: 0.45, depthWrite: false, side: THREE.DoubleSide });

// A shape's own colour (its URDF <material>: hilsim's export names every colour it writes, and
// urdf-loader gives a shape without one an unnamed stand-in): lit as the default ones are, both
// sides, translucent below alpha 1. The numbers are sRGB, as RViz and Choreonoid draw them
// (urdf-loader takes them as linear, which would wash every colour out). The what-if ghost keeps
// its one colour, so it is told from the robot. One material per colour.
const coloured = new Map();
function materialFor(given, fallback, ghosts) {
  if (ghosts || !given?.name || !given.color) return fallback;
  let mat = coloured.get(given);
  if (!mat) {
    const a = given.opacity ?? 1;
    mat = new THREE.MeshPhongMaterial({
      color: new THREE.Color().setRGB(given.color.r, given.color.g, given.color.b, THREE.SRGBColorSpace),
      shininess: 40, side: THREE.DoubleSide, transparent: a < 1, opacity: a, depthWrite: a >= 1 });
    coloured.set(given, mat);
  }
  return mat;
}

// Mesh geometry arrives after the robot (urdf-loader fetches each mesh file on its own): every
// mesh the models name is counted here until it is drawn or failed, so the tests can wait for
// them, and it takes its model's material when it arrives.
hs.meshes = { pending: 0, loaded: 0, failed: 0, urls: [] };

async function loadModels(models, ghosts) {
  for (const m of models) {
    const material = m.static ? staticMaterial : ghosts ? whatifMaterial : robotMaterial;
    const loader = new URDFLoader();
    loader.parseVisual = true;
    loader.parseCollision = true; // <collision>: what the bench simulates; <visual>: the look
    let robot = null;
    loader.loadMeshCb = (url, manager, mat, done) => {
      hs.meshes.pending++;
      loader.defaultMeshLoader(url, manager, mat, (obj, err) => {
        hs.meshes.pending--;
        if (!obj) {
          hs.meshes.failed++;
          note(`model ${m.name}: mesh ${url} not loaded`);
          done(obj, err);
          return;
        }
        hs.meshes.loaded++;
        hs.meshes.urls.push(url);
        obj.traverse((o) => {
          if (o.isMesh) {
            o.material = materialFor(mat, material, ghosts);
            o.userData.meshUrl = url;
            // STL's facet normals may be zero (many exporters leave them so): from the
            // triangles, or the mesh is drawn black.
            if (/\.stl$/i.test(url)) o.geometry.computeVertexNormals();
          }
        });
        done(obj, err);
        if (robot) showParts(robot, m);
      });
    };
    try {
      robot = await loader.loadAsync(m.urdf);
    } catch (e) {
      note(`model ${m.name}: ${e.message}`);
      continue;
    }
    // Primitives (boxes, cylinders, spheres); meshes that arrived already took theirs.
    robot.traverse((o) => {
      if (o.isMesh && !o.userData.meshUrl) o.material = materialFor(o.material, material, ghosts);
    });
    // The config's pose of the model in the world (VRML axis-angle).
    robot.position.fromArray(m.position);
    const ax = new THREE.Vector3(m.rotation[0], m.rotation[1], m.rotation[2]);
    if (ax.lengthSq() > 0) robot.quaternion.setFromAxisAngle(ax.normalize(), m.rotation[3]);
    world.add(robot);
    showParts(robot, m);
    const floating = Object.values(robot.joints).find((j) => j.jointType === 'floating');
    (ghosts ? hs.ghosts : hs.robots).push({ model: m, robot, floating });
    if (ghosts && m.static) world.remove(robot);
    if (!ghosts) addForceArrows(m, robot);
  }
}

// A link with <visual> geometry (a URDF robot's own meshes, loaded by the view) is drawn by it;
// its collision shapes, what the bench simulates, show instead with the "collision shapes" box.
// A link without is drawn by its collision shapes either way.
function showCollision(robot, on) {
  for (const link of Object.values(robot.links)) {
    if (!link.children.some((c) => c.isURDFVisual)) continue;
    for (const c of link.children) {
      if (c.isURDFCollider) c.visible = on;
      else if (c.isURDFVisual) c.visible = !on;
    }
  }
}
// What of a model shows: its visual or collision geometry, and for a static model (scenery:
// stairs, slopes, obstacles) not the floor slab it stands on, whose top would hide the grid (the
// grid is the floor).
function showParts(robot, m) {
  showCollision(robot, $('show-collision').checked);
  if (m.static) hideFloorParts(robot);
}
$('show-collision').addEventListener('change', () => {
  for (const r of [...hs.robots, ...hs.ghosts]) showParts(r.robot, r.model);
});

// A static model's parts that lie entirely at or below the floor plane (z <= 1 mm in the
// world) are the floor itself: hidden, so the grid shows.
function hideFloorParts(robot) {
  world.updateMatrixWorld(true);
  const toWorld = world.matrixWorld.clone().invert();
  robot.traverse((o) => {
    if (!o.isURDFCollider && !o.isURDFVisual) return;
    const box = new THREE.Box3().setFromObject(o);
    if (box.isEmpty()) return; // its mesh has not arrived yet
    box.applyMatrix4(toWorld);
    if (box.max.z <= 0.001) o.visible = false;
  });
}

// Each force sensor's reading as an arrow pointing at the sensor, in its own frame (as it reads
// it: the force the link beyond the sensor exerts), 1 m per FORCE_SCALE newtons.
const FORCE_SCALE = 500;
function addForceArrows(m, robot) {
  for (const fs of m.force_sensors || []) {
    const link = robot.links[fs.link];
    const reading = hs.info.source.readings.find((r) => r.name === fs.name);
    if (!link || !reading) continue;
    const frame = new THREE.Group();
    const R = fs.R;
    frame.matrixAutoUpdate = false;
    frame.matrix.set(R[0], R[1], R[2], fs.p[0], R[3], R[4], R[5], fs.p[1],
      R[6], R[7], R[8], fs.p[2], 0, 0, 0, 1);
    const arrow = new THREE.ArrowHelper(new THREE.Vector3(0, 0, 1), new THREE.Vector3(), 0.1,
      0xc62828, 0.04, 0.025);
    arrow.visible = false;
    // Drawn over the robot: the arrow starts inside the ankle and would be hidden by the leg or
    // the floor.
    for (const part of [arrow.line, arrow.cone]) {
      part.material.depthTest = false;
      part.material.transparent = true;
      part.renderOrder = 10;
    }
    frame.add(arrow);
    link.add(frame);
    hs.forceArrows.push({ name: fs.name, arrow, index: reading.index });
  }
}

// Every force is drawn pointing into where it acts: the head at the sensor (or the contact
// point), the tail out along -F. A foot's forces push up into the foot from below the floor
// instead of running up through the shin, where the leg hid them.
function poseForceArrows(fr) {
  const v = new THREE.Vector3();
  for (const a of hs.forceArrows) {
    const f = fr.r?.slice(a.index, a.index + 3);
    if (!f || f.some((x) => x === null)) { a.arrow.visible = false; continue; }
    v.set(f[0], f[1], f[2]);
    const n = v.length();
    a.arrow.visible = n > 1;
    if (n > 1) {
      const len = Math.max(n / FORCE_SCALE, 0.06);
      a.arrow.setDirection(v.divideScalar(n));
      a.arrow.setLength(len, 0.04, 0.025);
      a.arrow.position.copy(v).multiplyScalar(-len);
    }
    a.newtons = n;
  }
}

// The bench's contact points of its last physics step (with each root pose): an arrow pointing
// at each point along the force on the robot's link (a sole's from below the floor), 1 m per
// FORCE_SCALE newtons, drawn over the scene. The checkbox over the scene hides them.
const contactGroup = new THREE.Group();
world.add(contactGroup);
$('show-contacts').addEventListener('change', () => {
  contactGroup.visible = $('show-contacts').checked;
});
function contactArrow() {
  const a = new THREE.ArrowHelper(new THREE.Vector3(0, 0, 1), new THREE.Vector3(), 0.1, 0x2e7d32,
    0.02, 0.012);
  for (const part of [a.line, a.cone]) {
    part.material.depthTest = false;
    part.material.transparent = true;
    part.renderOrder = 11;
  }
  contactGroup.add(a);
  hs.contactArrows.push(a);
  return a;
}
function poseContacts(list) {
  const n = list ? list.length : 0;
  while (hs.contactArrows.length < n) contactArrow();
  const v = new THREE.Vector3();
  hs.contactArrows.forEach((a, i) => {
    a.visible = i < n;
    if (i >= n) return;
    const c = list[i];
    v.set(c[3], c[4], c[5]);
    const f = v.length(), len = Math.max(f / FORCE_SCALE, 0.02);
    if (f > 1e-9) a.setDirection(v.divideScalar(f));
    else v.set(0, 0, 1);
    a.setLength(len, 0.02, 0.012);
    a.position.set(c[0], c[1], c[2]).addScaledVector(v, -len); // the head at the point
    a.userData.point = [c[0], c[1], c[2]];
    a.userData.newtons = f;
  });
}

// ---- signals and plots ----
const signals = new Map(); // key -> {label, group, get(frame, status)}
const plotsEl = $('plots');

function addSignal(key, group, get) {
  signals.set(key, { key, group, get });
}

function buildSignals(src) {
  src.joints.forEach((j, i) => {
    for (const [f, arr] of [['q', 'q'], ['dq', 'dq'], ['tau', 'tau'], ['current', 'cur']])
      addSignal(`${j.name}.${f}`, `joint ${j.name}`, (fr) => fr[arr]?.[i]);
  });
  for (const r of src.readings) {
    const names = r.n === 6 ? ['fx', 'fy', 'fz', 'tx', 'ty', 'tz']
      : r.n === 3 ? ['x', 'y', 'z'] : [...Array(r.n).keys()].map(String);
    if (r.n > 12) continue; // a range scan is not a time signal
    names.forEach((f, k) => addSignal(`${r.name}.${f}`, `sensor ${r.name}`,
      (fr) => fr.r?.[r.index + k]));
  }
  (src.bodies || []).forEach((b, i) => {
    ['x', 'y', 'z'].forEach((f, k) => addSignal(`${b}.${f}`, `body ${b}`,
      (fr) => fr.bodies?.[i * 7 + k]));
  });
  if (src.mode === 'record') {
    // The replayed solver health and contacts of each state (see applyFrame).
    ['penetration_m', 'joint_error_m', 'force_jump_n'].forEach((k, i) =>
      addSignal(`solver.${k}`, 'solver health (replayed)', (fr) => fr.solver?.[i]));
    addSignal('contacts.count', 'contacts (replayed)', (fr) => fr.contacts?.length);
    addSignal('contacts.fz_sum_n', 'contacts (replayed)', (fr) =>
      fr.contacts?.reduce((sum, c) => sum + c[5], 0));
  }
  if (src.mode === 'live') {
    // Each free robot's root position, from the newest pose the bench gave (see onPose): did
    // it fall?
    for (const m of hs.info.models.filter((x) => !x.static)) {
      ['x', 'y', 'z'].forEach((f, k) => addSignal(`${m.name}.root.${f}`, `root ${m.name}`, () => {
        const e = hs.pose?.roots.find((x) => x[0] === m.name || x[0].startsWith(`${m.name}/`)) ??
          (hs.info.models.length === 1 ? hs.pose?.roots[0] : undefined);
        return e?.[1 + k];
      }));
    }
    // The solver's health and the contacts of the bench's last physics step (with each pose).
    ['penetration_m', 'joint_error_m', 'force_jump_n'].forEach((k, i) =>
      addSignal(`solver.${k}`, 'solver health', () => hs.pose?.solver?.[i]));
    addSignal('contacts.count', 'contacts', () => hs.pose?.contacts?.length);
    addSignal('contacts.dropped', 'contacts', () => hs.pose?.contacts_dropped);
    addSignal('contacts.fz_sum_n', 'contacts', () =>
      hs.pose?.contacts?.reduce((sum, c) => sum + c[5], 0));
    // The tick's phases over the ticks between two of the bench's state copies (p50, p99, max).
    ['wake', 'inputs', 'actuation', 'physics', 'sensors', 'outputs', 'tick'].forEach((ph) =>
      ['p50', 'p99', 'max'].forEach((q, k) => addSignal(`phase.${ph}.${q}_us`, `tick phase ${ph}`,
        () => hs.pose?.phases?.find((x) => x[0] === ph)?.[1 + k])));
    addSignal('bench.rt_factor', 'timing', () => rtFactor);
    addSignal('bench.worst_tick_us', 'timing', (fr, st) => st && st.worst_tick_ns / 1000);
    addSignal('bench.overruns', 'timing', (fr, st) => st && st.overruns);
    addSignal('bench.stale_joints', 'timing', (fr) => fr.stale);
    addSignal('view.bytes_per_s', 'timing', () => viewRate);
  }
  const groups = new Map();
  for (const s of signals.values()) {
    if (!groups.has(s.group)) groups.set(s.group, []);
    groups.get(s.group).push(s);
  }
  const box = $('signals');
  box.textContent = '';
  for (const [g, list] of groups) {
    const d = document.createElement('details');
    const sum = document.createElement('summary');
    sum.textContent = g;
    d.append(sum);
    for (const s of list) {
      const l = document.createElement('label');
      const c = document.createElement('input');
      c.type = 'checkbox';
      c.dataset.key = s.key;
      c.addEventListener('change', () => setSignal(s.key, c.checked));
      l.append(c, ' ', s.key.slice(s.key.lastIndexOf('.') + 1));
      d.append(l);
    }
    box.append(d);
  }
  $('filter').addEventListener('input', () => {
    const f = $('filter').value.toLowerCase();
    for (const d of box.children) {
      const show = !f || d.firstChild.textContent.toLowerCase().includes(f);
      d.hidden = !show;
      if (f && show) d.open = true;
    }
  });
}

function setSignal(key, on) {
  const s = signals.get(key);
  if (!s) return false;
  const box = document.querySelector(`#signals input[data-key="${CSS.escape(key)}"]`);
  if (box) box.checked = on;
  if (!on) {
    const p = hs.plots.get(key);
    if (p) { p.u.destroy(); p.el.remove(); hs.plots.delete(key); }
    showEmpty();
    return true;
  }
  if (hs.plots.has(key)) return true;
  const el = document.createElement('div');
  el.className = 'plot';
  plotsEl.append(el);
  const w = !!hs.info?.source.whatif;
  const series = [{ label: 't' }, { label: w ? 'recorded' : key, stroke: '#1f77b4', width: 1.5 }];
  const values = (u, vals) => {
    const out = axisValues(vals);
    hs.axisLabels.set(key, out);
    return out;
  };
  const axes = [{ label: hs.info?.source.mode === 'record' ? 'recording time, s' : 'sim time, s' },
    { label: unitOf(key), values, size: 60 }];
  if (w) {
    series.push({ label: 'what-if', stroke: '#e8772e', width: 1.5, dash: [6, 4] },
      { label: 'what-if - recorded', stroke: '#c62828', width: 1, scale: 'd' });
    axes.push({ scale: 'd', side: 1, label: 'difference', grid: { show: false }, values, size: 60 });
  }
  const u = new uPlot({
    title: key, width: 420, height: w ? 200 : 170,
    scales: { x: { time: false }, y: { range: valueRange }, ...(w ? { d: { range: valueRange } } : {}) },
    axes, series,
  }, w ? [[], [], [], []] : [[], []], el);
  hs.plots.set(key, { el, u, xs: [], ys: [], ws: [], ds: [], dirty: false });
  showEmpty();
  return true;
}

// A value axis's range: uPlot's, but a constant signal (a yaw held at exactly 0) gets a small
// range around its value, not uPlot's 0 to 100 (or 0 to twice the value): ranged as if it
// spanned a power of ten about a thousandth of its size either side (1e-3 about 0), as a
// signal wobbling by that much would be, so that the axis keeps several distinct tick labels.
function valueRange(u, min, max) {
  if (min == null || max == null) return [min, max];
  if (min === max) {
    const d = min === 0 ? 1e-3 : 10 ** Math.floor(Math.log10(Math.abs(min) * 1e-3));
    return uPlot.rangeNum(min - d, max + d, 0.1, true);
  }
  return uPlot.rangeNum(min, max, 0.1, true);
}
hs.valueRange = valueRange;

// An axis's tick labels: small signals (a knee at 1e-4 rad) need significant digits, not uPlot's
// fixed decimals, and a near-constant one (a standing waist at 0.7400 m +- 1e-6) as many more
// as it takes for every tick to read differently from its neighbours.
function axisValues(vals) {
  const fmt = (v, p) => (v === 0 ? '0' : Math.abs(v) >= 0.01 && Math.abs(v) < 1e4
    ? String(+v.toPrecision(p)) : v.toExponential(p - 2));
  let out = vals.map((v) => fmt(v, 3));
  for (let p = 4; p <= 16 && new Set(out).size < out.length; p++) out = vals.map((v) => fmt(v, p));
  return out;
}
hs.axisValues = axisValues;

function unitOf(key) {
  const f = key.slice(key.lastIndexOf('.') + 1);
  const name = key.slice(0, key.lastIndexOf('.'));
  const j = hs.info?.source.joints.find((x) => x.name === name);
  if (j) return { q: j.unit || 'rad', dq: `${j.unit || 'rad'}/s`, tau: 'N·m', current: 'A' }[f];
  if (/^f[xyz]$/.test(f)) return 'N';
  if (/^t[xyz]$/.test(f)) return 'N·m';
  if (key.endsWith('_us')) return 'µs';
  if (key.endsWith('_m')) return 'm';
  if (key.endsWith('_n')) return 'N';
  if (/\.root\.[xyz]$/.test(key)) return 'm';
  if (key.endsWith('bytes_per_s')) return 'B/s';
  return '';
}

function showEmpty() {
  let e = plotsEl.querySelector('.empty');
  if (!hs.plots.size && !e) {
    e = document.createElement('div');
    e.className = 'empty';
    e.textContent = 'Tick a signal on the right to plot it.';
    plotsEl.append(e);
  } else if (hs.plots.size && e) e.remove();
}

function samplePlots(fr) {
  for (const [key, p] of hs.plots) {
    const v = signals.get(key).get(fr, hs.status);
    if (v === undefined || v === null || Number.isNaN(v)) continue;
    if (p.xs.length && fr.t < p.xs[p.xs.length - 1]) {
      p.xs.length = 0; p.ys.length = 0; p.ws.length = 0; p.ds.length = 0;
    }
    p.xs.push(fr.t);
    p.ys.push(v);
    const wv = fr.w ? signals.get(key).get(fr.w, hs.status) : null;
    p.ws.push(wv ?? null);
    p.ds.push(wv == null ? null : wv - v);
    while (p.xs.length && p.xs[0] < fr.t - PLOT_WINDOW_S) {
      p.xs.shift(); p.ys.shift(); p.ws.shift(); p.ds.shift();
    }
    p.dirty = true;
  }
}

let lastPlotDraw = 0;
function drawPlots(now) {
  if (now - lastPlotDraw < 100) return; // 10 redraws a second are plenty for a curve
  lastPlotDraw = now;
  for (const p of hs.plots.values())
    if (p.dirty) {
      p.u.setData(hs.info.source.whatif ? [p.xs, p.ys, p.ws, p.ds] : [p.xs, p.ys]);
      p.dirty = false;
    }
}

// ---- status ----
let rtFactor = null, viewRate = null;
const rtWin = [];
function note(text) { $('scene-note').textContent = text; }

function parseStatus(line) {
  const num = (k) => { const m = line.match(new RegExp(`\\b${k} (-?\\d+)`)); return m ? Number(m[1]) : null; };
  const word = (k) => { const m = line.match(new RegExp(`\\b${k} (\\S+?)[;\\s]`)); return m ? m[1] : null; };
  return {
    ok: line.startsWith('ok'), clock: word('clock'), tick: num('tick'), overruns: num('overruns'),
    missed: num('missed'), worst_tick_ns: num('worst_tick_ns'), safe_hold: num('safe_hold'),
    live_steps: num('live_steps'), scenario: word('scenario'), lockstep_timeouts: num('lockstep_timeouts'),
    // last on the line: "can none" or "can main error-active drops 0, aux bus-off drops 3"
    can: line.match(/; can (.*?)\s*$/)?.[1] ?? null,
  };
}

// The scenario's word in the strip: the control socket's (idle, starting, running, ended), but
// once the timeline has the verdict of the scenario that ended, that ("ended FAIL"): the socket
// says idle again as soon as it took the scenario back to decide it.
function showScenarioWord() {
  const word = hs.status?.scenario ?? '-';
  const sc = hs.scenario;
  const ended = sc && sc.state === 'ended' && (word === 'idle' || word === 'ended');
  $('st-scen').textContent = ended ? `ended ${sc.verdict ?? 'deciding'}` : word;
  $('st-scen').className = ended && sc.verdict && sc.verdict !== 'PASS' ? 'warn' : '';
}

// Each CAN bus as the bench's tick last saw it; a bus not error-active, or one that dropped
// frames, is marked.
function showCan(text) {
  const el = $('st-can');
  if (text == null) { el.textContent = '-'; el.className = ''; return; }
  el.textContent = text === 'none' ? 'none' : text.replace(/ drops 0\b/g, '');
  el.className = /error-passive|error-warning|bus-off|stopped|drops [1-9]/.test(text) ? 'warn' : '';
}

let lastBytes = null;
function onStatus(m) {
  const st = m.line ? parseStatus(m.line + ' ') : null;
  hs.status = st;
  const v = m.view;
  hs.viewStats = v;
  const now = performance.now();
  if (lastBytes) viewRate = (v.bytes - lastBytes.bytes) / ((now - lastBytes.t) / 1000);
  lastBytes = { bytes: v.bytes, t: now };
  $('st-clients').textContent = v.clients;
  if (st && st.ok) {
    $('st-clock').textContent = st.clock ?? '-';
    const miss = (st.overruns ?? 0) + (st.missed ?? 0);
    $('st-miss').textContent = `${st.overruns ?? '-'} / ${st.missed ?? '-'}`;
    $('st-miss').className = miss ? 'warn' : '';
    $('st-worst').textContent = st.worst_tick_ns != null ? `${(st.worst_tick_ns / 1000).toFixed(0)} µs` : '-';
    $('st-faults').textContent = st.live_steps ?? '-';
    showScenarioWord();
    showCan(st.can);
    $('st-hold').className = st.safe_hold ? 'on' : '';
  } else if (m.line) {
    $('st-scen').textContent = '-';
    $('st-can').textContent = '-';
    $('st-msg').textContent = m.line; // the control socket's error, as it said it
  }
  if (v.source_gone) { $('st-conn').textContent = 'bench gone'; $('st-conn').className = 'bad'; }
}

// ---- frames ----
let pending = null;
function onFrame(fr) {
  hs.frames++;
  hs.lastFrame = fr;
  pending = fr; // the scene takes the newest at its next draw; the plots take every frame
  if (hs.ready) samplePlots(fr);
  if (fr.mono !== undefined) {
    rtWin.push([fr.t, fr.mono]);
    while (rtWin.length > 2 && rtWin[rtWin.length - 1][1] - rtWin[0][1] > 2e9) rtWin.shift();
    const a = rtWin[0], b = rtWin[rtWin.length - 1];
    if (b[1] > a[1]) rtFactor = (b[0] - a[0]) / ((b[1] - a[1]) / 1e9);
  }
}

function applyFrame(fr) {
  const src = hs.info.source;
  poseRobots(hs.robots, fr, src);
  poseForceArrows(fr);
  if (fr.w) poseRobots(hs.ghosts, fr.w, src);
  if (src.mode === 'record') {
    // A recording keeps no contacts: the view replays it and sends those of each state the
    // replay has reproduced (none before it gets there, or from where it differed).
    poseContacts(fr.contacts);
    hs.appliedContacts = fr.contacts ?? [];
  }
  showFrame(fr, src);
}

function poseRobots(robots, fr, src) {
  for (const r of robots) {
    src.joints.forEach((j, i) => {
      const q = fr.q[i];
      if (q === null || q === undefined) return;
      const short = j.name.slice(j.name.lastIndexOf('/') + 1);
      const joint = r.robot.joints[j.name] || r.robot.joints[short];
      if (joint && joint.jointType !== 'floating' && joint.jointType !== 'fixed') joint.setJointValue(q);
    });
    if (fr.bodies && src.bodies) placeRoot(r, src.bodies, (i) => fr.bodies.slice(i * 7, i * 7 + 7));
  }
}

// A free robot's root body where the bench has it: names are a recording's bodies (named after
// the model or MODEL/LINK) or a live bench's root links (LINK, or MODEL/LINK with several
// models); get(i) is [x y z qw qx qy qz] of names[i] in the world.
function placeRoot(r, names, get) {
  if (!r.floating) return;
  const link = r.floating.children.find((c) => c.isURDFLink)?.name;
  const i = names.findIndex((b) => b === r.model.name || b === link ||
    b === `${r.model.name}/${link}`);
  if (i < 0) return;
  const b = get(i);
  r.robot.position.set(0, 0, 0);
  r.robot.quaternion.identity();
  r.floating.position.set(b[0], b[1], b[2]);
  r.floating.quaternion.set(b[4], b[5], b[6], b[3]);
}

// A live bench's root poses (from its control socket, at up to 30 Hz): every free robot moves
// as a whole, so a pushed biped is seen to fall.
let pendingPose = null;
function onPose(m) {
  hs.poses++;
  hs.pose = m;
  pendingPose = m;
}
function applyPose(m) {
  const names = m.roots.map((x) => x[0]);
  for (const r of hs.robots) placeRoot(r, names, (i) => m.roots[i].slice(1));
  poseContacts(m.contacts);
  hs.appliedContacts = m.contacts ?? [];
  hs.appliedPose = m.tick;
  hs.posesApplied = (hs.posesApplied || 0) + 1;
}

function showFrame(fr, src) {
  $('st-tick').textContent = fr.tick;
  $('st-time').textContent = fr.t.toFixed(3);
  $('st-rt').textContent = rtFactor != null ? rtFactor.toFixed(3) : '-';
  if (src.mode === 'record') {
    if (!scrubbing) $('tl-range').value = fr.tick;
    $('tl-tick').textContent = fr.tick;
    $('tl-play').textContent = fr.playing ? 'pause' : 'play';
    playing = fr.playing;
  }
  hs.applied++;
  hs.appliedTick = fr.tick;
  // When each live frame reached the scene (wall clock, ms) and when the bench published it
  // (its CLOCK_MONOTONIC, ns): the tests turn the pair into the publish-to-scene latency.
  if (fr.mono !== undefined) {
    hs.drawLog.push([performance.timeOrigin + performance.now(), fr.mono]);
    if (hs.drawLog.length > 600) hs.drawLog.shift();
  }
}

function draw(now) {
  requestAnimationFrame(draw);
  resize();
  if (pendingPose && hs.ready) { applyPose(pendingPose); pendingPose = null; }
  if (pending && hs.ready) { applyFrame(pending); pending = null; }
  controls.update();
  renderer.render(scene, camera);
  drawPlots(now);
  hs.drawn++;
}
requestAnimationFrame(draw);

// ---- timeline (recordings) ----
let scrubbing = false, playing = false;
function setupTimeline(src) {
  $('timeline').hidden = false;
  const range = $('tl-range');
  range.min = src.first_tick;
  range.max = src.last_tick;
  range.addEventListener('input', () => { scrubbing = true; send({ type: 'seek', tick: Number(range.value) }); });
  range.addEventListener('change', () => { scrubbing = false; });
  $('tl-play').addEventListener('click', () => send({ type: playing ? 'pause' : 'play' }));
  $('tl-speed').addEventListener('change', () => send({ type: 'speed', value: Number($('tl-speed').value) }));
  const span = Math.max(1, src.last_tick - src.first_tick);
  const w = src.whatif;
  if (w) {
    let text = `what-if (${w.label}): `;
    if (w.diverged) {
      const i = document.createElement('i');
      i.className = 'diverged';
      i.style.left = `${(100 * (w.first_tick - src.first_tick)) / span}%`;
      i.title = `diverged at tick ${w.first_tick}`;
      $('tl-marks').append(i);
      text += `diverged at tick ${w.first_tick} on ${w.signal} (recorded ${w.recorded}, ` +
        `what-if ${w.replayed}); max |q error| ${Number(w.max_abs_q_err).toPrecision(3)}`;
    } else {
      text += `bit-exact over ${w.ticks} ticks`;
    }
    $('tl-whatif').textContent = text;
    $('tl-whatif').hidden = false;
  }
  for (const e of src.events) {
    const i = document.createElement('i');
    i.style.left = `${(100 * (e.tick - src.first_tick)) / span}%`;
    i.title = `tick ${e.tick}: ${e.text || 'event ' + e.kind}`;
    $('tl-marks').append(i);
  }
}

// ---- connection ----
let ws = null;
// ---- the scenario timeline (live): the bench's scenario as of its last state copy ----
function onScenario(m) {
  hs.scenario = m.scenario;
  hs.scenarioMessages = (hs.scenarioMessages ?? 0) + 1;
  const sc = m.scenario;
  showScenarioWord();
  $('scen').hidden = !sc;
  if (!sc) return;
  const period = (hs.info?.source?.period_ns ?? 0) / 1e9;
  const total = Math.max(1, period > 0 ? Math.round(sc.duration_s / period) : sc.ticks);
  const pct = (t) => `${Math.min(100, Math.max(0, (100 * t) / total)).toFixed(3)}%`;
  const when = (t) => (period > 0 ? `tick ${t} (${(t * period).toFixed(3)} s)` : `tick ${t}`);
  const el = (tag, text, cls) => {
    const e = document.createElement(tag);
    if (text != null) e.textContent = text;
    if (cls) e.className = cls;
    return e;
  };
  $('scen-name').textContent = sc.name;
  $('scen-state').textContent = sc.state;
  const verdict = $('scen-verdict');
  verdict.replaceChildren(sc.verdict ? el('span', sc.verdict, `s-${sc.verdict.toLowerCase()}`)
    : el('span', sc.state === 'ended' ? 'deciding' : ''));
  $('scen-clock').textContent = `${when(sc.ticks)} of ${sc.duration_s} s`;
  $('scen-now').style.left = pct(sc.ticks);
  $('scen-steps').replaceChildren(...sc.steps.filter((st) => st.onset_tick >= 0).map((st) => {
    const i = el('i');
    i.style.left = pct(st.onset_tick);
    i.style.width = pct(st.active_ticks);
    i.title = `${st.name || st.kind} (${st.kind}): from ${when(st.onset_tick)}, active ${st.active_ticks} ticks`;
    return i;
  }));
  $('scen-marks').replaceChildren(...sc.expectations.filter((e) => e.tick >= 0).map((e) => {
    const b = el('b', null, `s-${e.status}`);
    b.style.left = pct(e.tick);
    b.title = `${e.name}: ${e.status} at ${when(e.tick)}`;
    return b;
  }));
  $('scen-rows').tBodies[0].replaceChildren(...sc.expectations.map((e) => {
    const tr = el('tr', null, `exp s-row-${e.status}`);
    tr.dataset.name = e.name;
    tr.dataset.status = e.status;
    tr.append(el('td', e.name), el('td', String(e.line)));
    const st = el('td', null, 'status');
    st.append(el('span', e.status, `s-${e.status}`));
    tr.append(st, el('td', e.tick >= 0 ? when(e.tick) : '-', 'tick'),
      el('td', e.value != null ? e.value.toPrecision(6) : '-', 'value'),
      el('td', e.opened_tick >= 0 ? when(e.opened_tick) : '-'));
    return tr;
  }));
}

function send(obj) {
  if (ws && ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify(obj));
}

async function onInfo(info) {
  const first = !hs.info;
  hs.info = info;
  if (!first) return; // a reconnect to the same view: the page is already built
  const src = info.source;
  $('st-bench').textContent = src.mode === 'live' ? `bench ${src.bench}` : `recording ${src.dir}`;
  document.title = `hilsim view: ${src.bench || src.dir}`;
  if (src.mode === 'record') {
    $('st-conn').textContent = 'recording';
    $('st-clock').textContent = src.clock || '-';
    setupTimeline(src);
  }
  buildSignals(src);
  if (info.control) {
    $('controls').hidden = false;
    $('ctl-form').addEventListener('submit', (e) => {
      e.preventDefault();
      send({ type: 'ctl', line: $('ctl-line').value });
    });
  }
  if (!info.models.length) note('no model to draw: start hilsim view with the bench\'s --config');
  await loadModels(info.models, false);
  if (src.whatif) await loadModels(info.models, true);
  const q = src.joints.find((j) => /KNEE|ELBOW/.test(j.name)) || src.joints[0];
  if (q) setSignal(`${q.name}.q`, true);
  showEmpty();
  hs.ready = true;
}

function connect() {
  const url = `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/` +
    (token ? `?token=${encodeURIComponent(token)}` : '');
  ws = new WebSocket(url, 'hilsim');
  ws.onopen = () => {
    $('st-conn').textContent = hs.info?.source.mode === 'record' ? 'recording' : 'live';
    $('st-conn').className = 'ok';
  };
  ws.onclose = () => {
    $('st-conn').textContent = 'disconnected';
    $('st-conn').className = 'bad';
    setTimeout(connect, 1000);
  };
  ws.onmessage = (ev) => {
    let m;
    try { m = JSON.parse(ev.data); } catch { return; }
    if (m.type === 'frame') onFrame(m);
    else if (m.type === 'pose') onPose(m);
    else if (m.type === 'status') onStatus(m);
    else if (m.type === 'scenario') onScenario(m);
    else if (m.type === 'info') onInfo(m);
    else if (m.type === 'answer' || m.type === 'error') {
      hs.messages.push(m);
      $('ctl-answer').textContent = m.text;
      $('st-msg').textContent = m.type === 'error' ? m.text : '';
    }
  };
}
connect();
