// flexmbs interactive viewer (docs/post_processing.md): draws the scene of the page's
// #flexmbs-scene block with three.js, which the page itself carries (#three-src), so the
// page needs no network. Every frame moves each body by its coordinates: a flexible body's
// node k is at R + A(p) (u0_k + s Phi_k xi) (docs/theory_ffrf.md), s the display scale.
// Page address options (after #, joined by &): t=SECONDS start time, paused, probe (write
// the drawn positions of each shown frame into #probe, for the tests).

const $ = (id) => document.getElementById(id);
const data = JSON.parse($('flexmbs-scene').textContent);
const hash = new URLSearchParams(location.hash.slice(1));

function bytes(s) {
  const b = atob(s);
  const u = new Uint8Array(b.length);
  for (let i = 0; i < b.length; i++) u[i] = b.charCodeAt(i);
  return u.buffer;
}
const f32 = (s) => new Float32Array(bytes(s));
const f64 = (s) => new Float64Array(bytes(s));
const u32 = (s) => new Uint32Array(bytes(s));
const u16 = (s) => new Uint16Array(bytes(s));

function fail(message) {
  const el = $('message');
  el.textContent = message;
  el.style.display = 'block';
}

let THREE, OrbitControls;
try {
  const url = URL.createObjectURL(new Blob([$('three-src').textContent],
                                           {type: 'text/javascript'}));
  THREE = await import(url);
  OrbitControls = new Function('THREE', $('orbit-src').textContent)(THREE);
} catch (e) {
  fail('three.js could not be loaded: ' + e);
  throw e;
}

// ---------------------------------------------------------------- renderer and camera
const view = $('view');
let renderer;
try {
  renderer = new THREE.WebGLRenderer({antialias: true, preserveDrawingBuffer: true});
} catch (e) {
  fail('This browser cannot draw with WebGL, which the viewer needs: ' + e.message);
  throw e;
}
renderer.setPixelRatio(window.devicePixelRatio || 1);
view.appendChild(renderer.domElement);
const scene = new THREE.Scene();
scene.background = new THREE.Color(0xffffff);
const V = data.view;
const center = new THREE.Vector3(...V.center);
const camera = new THREE.PerspectiveCamera(30, 1, V.radius * 0.01, V.radius * 200);
camera.up.set(...V.up);
scene.add(camera);
scene.add(new THREE.AmbientLight(0xffffff, 1.2));
const headlight = new THREE.DirectionalLight(0xffffff, 2.0);
headlight.position.set(0.3, 0.6, 1.0);
camera.add(headlight);
const controls = new OrbitControls(camera, renderer.domElement);
let dirty = true;
const pageStart = performance.now();  // the clock's origin (page time, ms)
let last = pageStart;  // the page time of the clock's last step (ms)
controls.addEventListener('change', () => { dirty = true; });

function home() {  // the first view: along V.direction, every corner of the run's extent in sight
  const back = new THREE.Vector3(...V.direction).normalize();
  const right = new THREE.Vector3().crossVectors(camera.up, back).normalize();
  const up = new THREE.Vector3().crossVectors(back, right);
  const tanV = Math.tan(THREE.MathUtils.degToRad(camera.fov / 2));
  const tanH = tanV * (camera.aspect || 1);
  let distance = 0;
  for (const x of [V.lo[0], V.hi[0]]) for (const y of [V.lo[1], V.hi[1]]) for (const z of [V.lo[2], V.hi[2]]) {
    const p = new THREE.Vector3(x, y, z).sub(center);
    const depth = p.dot(back);
    distance = Math.max(distance, depth + Math.abs(p.dot(right)) / (0.9 * tanH),
                        depth + Math.abs(p.dot(up)) / (0.9 * tanV));
  }
  camera.position.copy(center).addScaledVector(back, Math.max(distance, 1e-3 * V.radius));
  controls.target.copy(center);
  camera.lookAt(center);
  controls.update();
  dirty = true;
}

function resize() {
  const w = Math.max(view.clientWidth, 16), h = Math.max(view.clientHeight, 16);
  renderer.setSize(w, h);
  camera.aspect = w / h;
  camera.updateProjectionMatrix();
  dirty = true;
}

// ------------------------------------------------------------------------- colours
const VIRIDIS = ['#440154', '#472d7b', '#3b528b', '#2c728e', '#21918c', '#28ae80',
                 '#5ec962', '#addc30', '#fde725'];
const LUT = VIRIDIS.map((c) => new THREE.Color().setStyle(c));
const PLAIN = new THREE.Color().setStyle('#4a78b5');
function colourOf(x, out, i) {
  if (!(x >= 0)) x = 0;
  if (x > 1) x = 1;
  const f = x * (LUT.length - 1), j = Math.min(Math.floor(f), LUT.length - 2), w = f - j;
  out[3 * i] = LUT[j].r + w * (LUT[j + 1].r - LUT[j].r);
  out[3 * i + 1] = LUT[j].g + w * (LUT[j + 1].g - LUT[j].g);
  out[3 * i + 2] = LUT[j].b + w * (LUT[j + 1].b - LUT[j].b);
}

// ---------------------------------------------------------------------- the frames
const times = f64(data.t);
const coords = f32(data.coords);
const NC = data.nCoords;
const grey = new THREE.MeshPhongMaterial({color: 0x9a9a9a, shininess: 20});
const light = new THREE.MeshPhongMaterial({color: 0xb8b8b8, shininess: 20,
                                            side: THREE.DoubleSide});
const red = new THREE.MeshPhongMaterial({color: 0xc0392b, shininess: 30});
const translucent = new THREE.MeshPhongMaterial({color: 0xb8b8b8, shininess: 20,
                                                 transparent: true, opacity: 0.45,
                                                 depthWrite: false});

function setPose(group, frame, offset) {
  const c = frame * NC + offset;
  group.position.set(coords[c], coords[c + 1], coords[c + 2]);
  group.quaternion.set(coords[c + 4], coords[c + 5], coords[c + 6], coords[c + 3]);
  group.quaternion.normalize();
  group.updateMatrixWorld(true);
}

class Flexible {
  constructor(b) {
    this.b = b;
    this.n = b.nModes;
    this.N = b.nShown;
    this.u0 = f32(b.nodes);
    this.phi = f32(b.phi);
    this.local = new Float32Array(3 * this.N);
    this.mag = new Float32Array(this.N);
    this.value = new Float32Array(this.N);
    this.stress = b.stress ? u16(b.stress) : null;
    this.group = new THREE.Group();
    scene.add(this.group);
    const material = new THREE.MeshPhongMaterial({vertexColors: true, flatShading: true,
      side: THREE.DoubleSide, shininess: 25});
    const tri = u32(b.triangles), lines = u32(b.lines), pts = u32(b.points);
    this.parts = [];
    if (b.section && lines.length) {
      this.beam = new Beam(lines, b.section, this.N);
      this.group.add(new THREE.Mesh(this.beam.geometry, material));
      this.parts.push(this.beam.geometry);
    } else if (lines.length) {
      const g = this.geometry(lines);
      this.group.add(new THREE.LineSegments(g, new THREE.LineBasicMaterial(
        {vertexColors: true})));
    }
    if (tri.length) this.group.add(new THREE.Mesh(this.geometry(tri), material));
    if (pts.length) {
      this.group.add(new THREE.Points(this.geometry(pts), new THREE.PointsMaterial(
        {vertexColors: true, size: 4, sizeAttenuation: false})));
    }
  }

  geometry(index) {
    if (!this.shared) {
      this.shared = {position: new THREE.BufferAttribute(this.local, 3),
                     color: new THREE.BufferAttribute(new Float32Array(3 * this.N), 3)};
      this.shared.position.setUsage(THREE.DynamicDrawUsage);
      this.shared.color.setUsage(THREE.DynamicDrawUsage);
    }
    const g = new THREE.BufferGeometry();
    g.setAttribute('position', this.shared.position);
    g.setAttribute('color', this.shared.color);
    g.setIndex(new THREE.BufferAttribute(index, 1));
    this.parts.push(g);
    return g;
  }

  update(frame, scale, field) {
    setPose(this.group, frame, this.b.offset);
    const c = frame * NC + this.b.offset + 7, n = this.n, phi = this.phi;
    const top = data.fields[field] ? data.fields[field].max : 1;
    for (let k = 0; k < this.N; k++) {
      let m2 = 0;
      for (let i = 0; i < 3; i++) {
        let d = 0;
        const row = (3 * k + i) * n;
        for (let j = 0; j < n; j++) d += phi[row + j] * coords[c + j];
        this.local[3 * k + i] = this.u0[3 * k + i] + scale * d;
        m2 += d * d;
      }
      this.mag[k] = Math.sqrt(m2);
      if (field === 'displacement') this.value[k] = 1e3 * this.mag[k] / top;
      else if (field === 'stress') {
        this.value[k] = this.stress ? this.stress[frame * this.N + k] / 65535 : 0;
      } else this.value[k] = -1;
    }
    if (this.beam) this.beam.update(this.local, this.value);
    if (this.shared) {
      const col = this.shared.color.array;
      for (let k = 0; k < this.N; k++) {
        if (this.value[k] < 0) PLAIN.toArray(col, 3 * k); else colourOf(this.value[k], col, k);
      }
      this.shared.position.needsUpdate = true;
      this.shared.color.needsUpdate = true;
    }
    for (const g of this.parts) g.computeBoundingSphere();
  }

  world() {  // the shown nodes' global positions [m]
    const out = [], v = new THREE.Vector3();
    for (let k = 0; k < this.N; k++) {
      v.fromArray(this.local, 3 * k).applyMatrix4(this.group.matrixWorld);
      out.push([v.x, v.y, v.z]);
    }
    return out;
  }
}

class Beam {  // a section swept along a line mesh (the renders' swept beams)
  constructor(lines, section, nNodes) {
    this.lines = lines;
    this.E = lines.length / 2;
    this.sec = section.points;
    this.k = this.sec.length;
    this.z = new THREE.Vector3(...section.z);
    this.tangent = new Float32Array(3 * nNodes);
    const k = this.k, E = this.E;
    this.position = new Float32Array(E * 2 * k * 3);
    this.color = new Float32Array(E * 2 * k * 3);
    const faces = [];
    let o = 0;
    const loops = section.loops;
    for (const m of loops) {
      for (let i = 0; i < m; i++) {
        const j = (i + 1) % m;
        faces.push([o + i, o + j, k + o + j], [o + i, k + o + j, k + o + i]);
      }
      o += m;
    }
    const outer = this.sec.slice(0, loops[0]).map((p) => new THREE.Vector2(p[0], p[1]));
    const holes = [];
    o = loops[0];
    for (const m of loops.slice(1)) {
      holes.push(this.sec.slice(o, o + m).map((p) => new THREE.Vector2(p[0], p[1])));
      o += m;
    }
    for (const t of THREE.ShapeUtils.triangulateShape(outer, holes)) {
      faces.push([t[2], t[1], t[0]], [k + t[0], k + t[1], k + t[2]]);
    }
    const index = new Uint32Array(E * faces.length * 3);
    let w = 0;
    for (let e = 0; e < E; e++) {
      for (const f of faces) for (const v of f) index[w++] = 2 * k * e + v;
    }
    this.geometry = new THREE.BufferGeometry();
    this.geometry.setAttribute('position', new THREE.BufferAttribute(this.position, 3)
      .setUsage(THREE.DynamicDrawUsage));
    this.geometry.setAttribute('color', new THREE.BufferAttribute(this.color, 3)
      .setUsage(THREE.DynamicDrawUsage));
    this.geometry.setIndex(new THREE.BufferAttribute(index, 1));
  }

  update(points, value) {
    const t = this.tangent, L = this.lines, k = this.k;
    t.fill(0);
    for (let e = 0; e < this.E; e++) {
      const a = L[2 * e], b = L[2 * e + 1];
      let dx = points[3 * b] - points[3 * a], dy = points[3 * b + 1] - points[3 * a + 1];
      let dz = points[3 * b + 2] - points[3 * a + 2];
      const len = Math.hypot(dx, dy, dz) || 1e-300;
      dx /= len; dy /= len; dz /= len;
      for (const node of [a, b]) { t[3 * node] += dx; t[3 * node + 1] += dy; t[3 * node + 2] += dz; }
    }
    const tv = new THREE.Vector3(), y = new THREE.Vector3(), z = new THREE.Vector3();
    const frames = new Map();
    const frameAt = (node) => {
      if (frames.has(node)) return frames.get(node);
      tv.fromArray(t, 3 * node);
      if (tv.length() > 0) tv.normalize(); else tv.set(1, 0, 0);
      z.copy(this.z).addScaledVector(tv, -tv.dot(this.z));
      if (z.length() <= 1e-9) {
        z.crossVectors(tv, new THREE.Vector3(1, 0, 0));
        if (z.length() <= 1e-6) z.crossVectors(tv, new THREE.Vector3(0, 1, 0));
      }
      z.normalize();
      y.crossVectors(z, tv);
      const f = [y.clone(), z.clone()];
      frames.set(node, f);
      return f;
    };
    for (let e = 0; e < this.E; e++) {
      for (let s = 0; s < 2; s++) {
        const node = L[2 * e + s], [yy, zz] = frameAt(node);
        for (let c = 0; c < k; c++) {
          const w = 3 * (2 * k * e + s * k + c), [py, pz] = this.sec[c];
          for (let i = 0; i < 3; i++) {
            this.position[w + i] = points[3 * node + i] + py * yy.getComponent(i)
              + pz * zz.getComponent(i);
          }
          if (value[node] < 0) PLAIN.toArray(this.color, w);
          else colourOf(value[node], this.color, w / 3);
        }
      }
    }
    this.geometry.attributes.position.needsUpdate = true;
    this.geometry.attributes.color.needsUpdate = true;
  }
}

class Rigid {
  constructor(r) {
    this.r = r;
    this.group = new THREE.Group();
    scene.add(this.group);
    if (r.shape) {
      const g = new THREE.BufferGeometry();
      g.setAttribute('position', new THREE.BufferAttribute(f32(r.shape.points), 3));
      g.setIndex(new THREE.BufferAttribute(u32(r.shape.triangles), 1));
      g.computeVertexNormals();
      this.group.add(new THREE.Mesh(g, light));
      return;
    }
    const pts = r.points.map((p) => new THREE.Vector3(...p));
    const yAxis = new THREE.Vector3(0, 1, 0);
    for (let i = 0; i + 1 < pts.length; i++) {
      const d = new THREE.Vector3().subVectors(pts[i + 1], pts[i]);
      const len = d.length();
      if (len <= 1e-12) continue;
      const rod = new THREE.Mesh(new THREE.CylinderGeometry(data.radii.rod, data.radii.rod,
                                                            len, 16), grey);
      rod.position.addVectors(pts[i], pts[i + 1]).multiplyScalar(0.5);
      rod.quaternion.setFromUnitVectors(yAxis, d.normalize());
      this.group.add(rod);
    }
    if (r.ellipsoid) {  // the inertia ellipsoid: the unit sphere through its transform
      const shell = new THREE.Mesh(new THREE.SphereGeometry(1, 32, 20), translucent);
      shell.matrixAutoUpdate = false;
      shell.matrix.set(...r.ellipsoid.matrix);
      this.group.add(shell);
    }
    const ball = new THREE.Mesh(new THREE.SphereGeometry(
      r.com ? (r.ellipsoid ? data.radii.comInEllipsoid : data.radii.com)
            : 2 * data.radii.rod, 24, 16), light);
    ball.position.set(...(r.com || r.points[0]));
    this.group.add(ball);
  }

  update(frame) { setPose(this.group, frame, this.r.offset); }
}

const flexible = data.flexible.map((b) => new Flexible(b));
const rigid = data.rigid.map((r) => new Rigid(r));
const jointBall = new THREE.SphereGeometry(data.radii.joint, 20, 14);
const joints = data.joints.map(() => { const m = new THREE.Mesh(jointBall, red); scene.add(m); return m; });

function markerPosition(m, frame, scale) {
  const v = new THREE.Vector3(...m.position);
  if (m.kind === 'rigid') return v.applyMatrix4(rigid[m.body].group.matrixWorld);
  if (m.kind === 'flexible') {
    const body = flexible[m.body];
    if (m.phi) {
      const c = frame * NC + body.b.offset + 7, n = body.n;
      for (let i = 0; i < 3; i++) {
        let d = 0;
        for (let j = 0; j < n; j++) d += m.phi[i * n + j] * coords[c + j];
        v.setComponent(i, v.getComponent(i) + scale * d);
      }
    }
    return v.applyMatrix4(body.group.matrixWorld);
  }
  return v;
}

// ---------------------------------------------------------------------- floor grid
{
  const G = data.view.grid, o = new THREE.Vector3(...G.origin);
  const a = new THREE.Vector3(...G.a), b = new THREE.Vector3(...G.b);
  const half = 0.5 * G.count * G.spacing, pos = [];
  for (let i = 0; i <= G.count; i++) {
    const s = -half + i * G.spacing;
    for (const [u, v] of [[a, b], [b, a]]) {
      const p0 = o.clone().addScaledVector(u, s).addScaledVector(v, -half);
      const p1 = o.clone().addScaledVector(u, s).addScaledVector(v, half);
      pos.push(p0.x, p0.y, p0.z, p1.x, p1.y, p1.z);
    }
  }
  const g = new THREE.BufferGeometry();
  g.setAttribute('position', new THREE.Float32BufferAttribute(pos, 3));
  scene.add(new THREE.LineSegments(g, new THREE.LineBasicMaterial({color: 0xc8c8c8})));
}

// ------------------------------------------------------------------------- controls
const state = {frame: -1, scale: data.scale, field: data.field, speed: data.speed,
               playing: times.length > 1 && !hash.has('paused'), time: times[0]};
const gaps = [];
for (let i = 1; i < times.length; i++) if (times[i] > times[i - 1]) gaps.push(times[i] - times[i - 1]);
const digits = gaps.length ? Math.min(9, Math.max(3, Math.ceil(-Math.log10(Math.min(...gaps))) + 1)) : 3;

const slider = $('time'), scaleInput = $('scale'), fieldSelect = $('field');
const speedSelect = $('speed'), playButton = $('play');
slider.max = String(times.length - 1);
scaleInput.value = String(data.scale);
for (const name of ['displacement', 'stress', 'none']) {
  if (name !== 'none' && !(data.fields[name] && data.flexible.length)) continue;
  fieldSelect.add(new Option(name, name, false, name === state.field));
}
for (const s of data.speeds) speedSelect.add(new Option(`${s}×`, String(s), false, s === state.speed));
$('grid').textContent = `grid ${lengthText(data.view.grid.spacing)}`;
document.title = data.title;
$('title').textContent = data.title;

function lengthText(x) {
  for (const [unit, f] of [['m', 1], ['cm', 1e-2], ['mm', 1e-3], ['µm', 1e-6]]) {
    if (x >= f - 1e-15) return `${+(x / f).toPrecision(6)} ${unit}`;
  }
  return `${x} m`;
}

function legend() {
  const f = data.fields[state.field];
  $('legend').style.display = f && data.flexible.length ? '' : 'none';
  if (f) {
    $('cbar').style.background = `linear-gradient(to right, ${VIRIDIS.join(', ')})`;
    $('cmin').textContent = '0';
    $('cmax').textContent = `${+f.max.toPrecision(3)} ${f.units}`;
  }
}

function show(frame, force) {
  frame = Math.max(0, Math.min(times.length - 1, frame));
  if (frame === state.frame && !force) return;
  state.frame = frame;
  for (const r of rigid) r.update(frame);
  for (const b of flexible) b.update(frame, state.scale, state.field);
  data.joints.forEach((j, i) => {
    joints[i].position.copy(markerPosition(data.markers[j.marker], frame, state.scale));
  });
  slider.value = String(frame);
  $('tlabel').textContent = `t = ${times[frame].toFixed(digits)} s`;
  dirty = true;
  if (hash.has('probe')) probe();
}

function probe() {
  const out = {frame: state.frame, time: times[state.frame], scale: state.scale,
               field: state.field, clock: state.time,
               elapsed: (last - pageStart) / 1000,
               flexible: flexible.map((b) => ({positions: b.world(),
                                                 value: Array.from(b.value)})),
               rigid: rigid.map((r) => ({position: r.group.position.toArray(),
                                          quaternion: r.group.quaternion.toArray()})),
               joints: joints.map((m) => m.position.toArray())};
  $('probe').textContent = JSON.stringify(out);
}

function frameAt(time) {  // the last output at or before `time`
  let lo = 0, hi = times.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (times[mid] <= time + 1e-12) lo = mid; else hi = mid - 1;
  }
  return lo;
}

function setPlaying(on) {
  state.playing = on && times.length > 1;
  playButton.textContent = state.playing ? '❚❚' : '▶';
  playButton.title = state.playing ? 'pause' : 'play';
}

playButton.addEventListener('click', () => {
  if (!state.playing && state.frame === times.length - 1) state.time = times[0];
  setPlaying(!state.playing);
});
slider.addEventListener('input', () => {
  const k = Number(slider.value);
  state.time = times[k];
  show(k);
});
scaleInput.addEventListener('input', () => {
  const s = Number(scaleInput.value);
  if (Number.isFinite(s) && s >= 0) { state.scale = s; show(state.frame, true); }
});
fieldSelect.addEventListener('change', () => {
  state.field = fieldSelect.value;
  legend();
  show(state.frame, true);
});
speedSelect.addEventListener('change', () => { state.speed = Number(speedSelect.value); });
$('home').addEventListener('click', home);
new ResizeObserver(resize).observe(view);

resize();
home();
legend();
setPlaying(state.playing);
if (hash.has('t')) state.time = Math.max(times[0], Number(hash.get('t')) || times[0]);
show(frameAt(state.time), true);

// The clock: each step advances the playback by the time since the last one and draws
// when something changed. Animation frames drive it in a visible page; a 25 Hz timer
// keeps it going where frames are not produced (headless screenshots at a page time).
function step() {
  const now = performance.now();
  const dt = Math.max(0, (now - last) / 1000);
  last = now;
  if (state.playing) {
    state.time += dt * state.speed;
    if (state.time > times[times.length - 1]) state.time = times[0];
    show(frameAt(state.time));
  }
  if (dirty) {
    renderer.render(scene, camera);
    dirty = false;
  }
}
function tick() {
  step();
  requestAnimationFrame(tick);
}
requestAnimationFrame(tick);
setInterval(step, 40);
