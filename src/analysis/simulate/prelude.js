// The mock Workflow runtime, evaluated in the sandbox before the script.
// It is a function of the host bindings; it installs the globals a workflow
// script sees and returns the driver the host uses to advance the run.
// Written for cc-teardown; semantics are described in docs/guide/simulate.md.
(function (host, argsJson, seed) {
  "use strict";
  // Agent completions wait here, in the order the calls were made; the host
  // settles one at a time, so every started agent is "in flight" together
  // (as under the real runtime's concurrency) and order is reproducible.
  const pending = [];
  // Virtual timers: fired in due order when nothing else can run.
  const timers = [];
  let timerSeq = 0;
  let now = 0;

  // Cut to a size a one-line status can show: a thrown string may be huge.
  // Titles, labels and log lines are cut here too, before they cross to the
  // host (which cuts again, in bytes): copying megabytes for a name that is
  // shown cut anyway would cost time at every call.
  const clip = (s, n) => (s.length > n ? s.slice(0, n) + "…" : s);
  const NAME = 1000;
  const LINE = 65536;
  // What the runtime turns a prompt, title or log message into.
  const text = (v) =>
    v === null || (typeof v !== "object" && typeof v !== "function") ? String(v) : "[" + typeof v + "]";
  const describe = (e) => {
    try {
      if (e !== null && typeof e === "object") {
        return {
          name: clip(String(e.name ?? "Error"), 200),
          message: clip(String(e.message ?? ""), 4000),
          stack: e.stack == null ? undefined : clip(String(e.stack), 16000),
        };
      }
      return { name: "thrown value", message: clip(String(e), 4000) };
    } catch (_) {
      return { name: "thrown value", message: "(unprintable)" };
    }
  };

  const define = (name, value) =>
    Object.defineProperty(globalThis, name, { value, writable: true, enumerable: true, configurable: true });

  define("agent", async function agent(prompt, opts) {
    const o = opts !== null && typeof opts === "object" ? opts : {};
    const schema = o.schema !== null && typeof o.schema === "object" ? JSON.stringify(o.schema) : undefined;
    const out = JSON.parse(
      host.agent(
        text(prompt),
        o.label == null ? undefined : clip(String(o.label), NAME),
        o.phase == null ? undefined : clip(String(o.phase), NAME),
        schema,
      ),
    );
    if (out.k === "cap") throw new Error(out.m);
    return new Promise((resolve, reject) =>
      pending.push(() => (out.k === "error" ? reject(new Error(out.m)) : resolve(out.k === "ok" ? out.v : null))),
    );
  });

  // A task that throws or rejects becomes null in the results, and a log
  // line says so: the real runtime's barrier never rejects as a whole.
  const settleAll = async (kind, promises) => {
    const settled = await Promise.allSettled(promises);
    return settled.map((s, i) => {
      if (s.status === "fulfilled") return s.value;
      host.log(kind + " task " + i + " failed: " + describe(s.reason).message, true);
      return null;
    });
  };

  define("parallel", async function parallel(tasks) {
    await null;
    if (!Array.isArray(tasks)) throw new TypeError("parallel(): expected an array of task functions");
    const fns = Array.from(tasks);
    host.fanout("parallel", fns.length, 0);
    for (const f of fns) {
      if (typeof f !== "function") throw new TypeError("parallel(): every task must be a function returning a promise, not a promise");
    }
    return settleAll(
      "parallel",
      fns.map((f) => {
        try {
          return Promise.resolve(f());
        } catch (e) {
          return Promise.reject(e);
        }
      }),
    );
  });

  // Each item flows through the stages on its own (no barrier between
  // stages); a stage returning null ends that item's flow.
  define("pipeline", async function pipeline(items, ...stages) {
    await null;
    if (!Array.isArray(items)) throw new TypeError("pipeline(): expected an array of items first");
    const list = Array.from(items);
    host.fanout("pipeline", list.length, stages.length);
    for (const f of stages) {
      if (typeof f !== "function") throw new TypeError("pipeline(): every stage must be a function");
    }
    return settleAll(
      "pipeline",
      list.map(async (item, i) => {
        let v = await item;
        for (const stage of stages) {
          if (v === null) break;
          v = await stage(v, item, i);
        }
        return v;
      }),
    );
  });

  define("phase", function phase(title) {
    host.phase(clip(text(title), NAME));
  });
  define("log", function log(message) {
    host.log(clip(text(message), LINE), false);
  });
  const consoleLine = (...parts) =>
    host.log(clip(parts.map((p) => (typeof p === "string" ? p : safeJson(p))).join(" "), LINE), false);
  const safeJson = (v) => {
    try {
      const s = JSON.stringify(v);
      return s === undefined ? String(v) : s;
    } catch (_) {
      return text(v);
    }
  };
  define("console", Object.freeze({ log: consoleLine, info: consoleLine, warn: consoleLine, error: consoleLine, debug: consoleLine }));
  // No token budget in a dry run: nothing is spent, nothing runs out.
  define("budget", Object.freeze({ __proto__: null, total: null, spent: () => 0, remaining: () => Infinity }));
  define("setTimeout", function setTimeout(fn, ms, ...rest) {
    const id = ++timerSeq;
    if (typeof fn === "function") timers.push({ id, due: now + Math.max(0, Number(ms) || 0), seq: id, fn, rest });
    return id;
  });
  define("clearTimeout", function clearTimeout(id) {
    const i = timers.findIndex((t) => t.id === id);
    if (i >= 0) timers.splice(i, 1);
  });
  // Nested workflows would need the other workflow's script: reported as
  // unsupported by name rather than pretending to run it.
  define("workflow", async function workflow(name) {
    host.unsupported("workflow");
    throw new Error("workflow(" + text(name) + "): nested workflows are not simulated");
  });
  define("args", argsJson === undefined ? undefined : JSON.parse(argsJson));
  // Code generation from strings is off in the real runtime's context, and
  // in this one (the engine has no compiler here: `Function`, the async and
  // generator function constructors throw too). This only words the error.
  define("eval", function (_) {
    throw new EvalError("code generation from strings is disabled in workflow scripts");
  });

  // Seeded Math.random so a run repeats exactly.
  let state = (seed >>> 0) ^ 0x6d2b79f5;
  Math.random = function random() {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };

  const globals = Object.getOwnPropertyNames(globalThis);

  return {
    globals,
    // 1 when an agent was settled, 2 when a timer fired, 0 when nothing is left.
    step() {
      if (pending.length > 0) {
        pending.shift()();
        return 1;
      }
      if (timers.length > 0) {
        timers.sort((a, b) => a.due - b.due || a.seq - b.seq);
        const t = timers.shift();
        now = t.due;
        try {
          t.fn(...t.rest);
        } catch (e) {
          host.log("timer callback threw: " + describe(e).message, true);
        }
        return 2;
      }
      return 0;
    },
    pending() {
      return pending.length + timers.length;
    },
    json(v) {
      if (v === undefined) return "null";
      return JSON.stringify(v, (_, x) => (typeof x === "function" ? undefined : typeof x === "bigint" ? String(x) : x));
    },
    describe(e) {
      return JSON.stringify(describe(e));
    },
  };
});
