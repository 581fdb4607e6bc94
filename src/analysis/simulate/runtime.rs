//! The sandbox: a QuickJS runtime with a memory cap, a deadline checked by
//! the interrupt handler, and a context holding only ECMAScript intrinsics —
//! no modules, no file system, network, process or timers of the host. The
//! mock Workflow runtime (prelude.js) calls back into [`Host`], which
//! records the trace and decides each agent's result.

use super::generate::{self, Generator, Rng, Settings};
use super::prepare::Prepared;
use super::scenario::{Action, CallKey, Scenario};
use super::*;
use rquickjs::context::intrinsic;
use rquickjs::{CatchResultExt, Context, Ctx, Function, Object, Promise, Runtime};
use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::time::Instant;

const PRELUDE: &str = include_str!("prelude.js");
/// Log lines kept; a script logging in a loop must not exhaust our memory.
const MAX_LOGS: usize = 10_000;
/// Fan-outs kept, for the same reason.
const MAX_FANOUTS: usize = 10_000;
/// Native stack the engine may use (deep recursion becomes a RangeError).
const STACK_BYTES: usize = 1 << 20;

/// Why the engine was told to stop.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Stop {
    Timeout,
    AgentCap,
}

/// The intrinsics of a bare ECMAScript realm (what the real runtime's
/// context offers), without the engine's extras.
type Realm = (
    intrinsic::Date,
    intrinsic::Eval,
    intrinsic::RegExpCompiler,
    intrinsic::RegExp,
    intrinsic::Json,
    intrinsic::Proxy,
    intrinsic::MapSet,
    intrinsic::TypedArrays,
    intrinsic::Promise,
    intrinsic::WeakRef,
);

struct Host {
    scenario: Scenario,
    generator: Generator,
    seed: u64,
    max_agents: u32,
    keep_prompts: bool,
    declared: Vec<String>,
    current: Option<String>,
    phases: Vec<PhaseEvent>,
    agents: Vec<AgentCall>,
    fanouts: Vec<ParallelFanout>,
    logs: Vec<LogLine>,
    logs_dropped: usize,
    unsupported: Vec<String>,
    stop: Rc<Cell<Option<Stop>>>,
}

/// Collapse whitespace runs and trim, as the runtime does for labels.
fn squash(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

impl Host {
    fn enter(&mut self, title: &str, marked: bool) -> usize {
        if let Some(i) = self.phases.iter().position(|p| p.title == title) {
            self.phases[i].marked |= marked;
            return i;
        }
        let index = self.phases.len();
        self.phases.push(PhaseEvent {
            index,
            title: title.to_string(),
            marked,
            declared: self.declared.iter().any(|d| d == title),
            agents: Vec::new(),
        });
        index
    }

    fn phase(&mut self, title: String) {
        self.enter(&title, true);
        self.current = Some(title);
    }

    fn log(&mut self, message: String, runtime: bool) {
        if self.logs.len() >= MAX_LOGS {
            self.logs_dropped += 1;
            return;
        }
        self.logs.push(LogLine {
            phase: self.current.clone(),
            message,
            source: if runtime { "runtime" } else { "script" }.into(),
        });
    }

    fn fanout(&mut self, kind: String, size: usize, stages: usize) {
        if self.fanouts.len() < MAX_FANOUTS {
            self.fanouts.push(ParallelFanout {
                index: self.fanouts.len(),
                kind,
                phase: self.current.clone(),
                size,
                stages,
            });
        }
    }

    /// One `agent()` call: record it and decide its result. Returns the
    /// outcome as JSON for the prelude (`k`: ok / null / error / cap).
    fn agent(
        &mut self,
        prompt: String,
        label: Option<String>,
        phase: Option<String>,
        schema: Option<String>,
    ) -> String {
        if self.agents.len() as u64 >= self.max_agents as u64 {
            self.stop.set(Some(Stop::AgentCap));
            return serde_json::json!({"k": "cap", "m": format!("agent call cap reached ({})", self.max_agents)})
                .to_string();
        }
        let index = self.agents.len();
        let phase = phase.or_else(|| self.current.clone());
        let label = match label {
            Some(l) => squash(&l),
            None => squash(&prompt.chars().take(60).collect::<String>()),
        };
        let schema: Option<Value> = schema.and_then(|s| serde_json::from_str(&s).ok());
        let picked = self
            .scenario
            .pick(&CallKey {
                phase: phase.as_deref(),
                label: &label,
                prompt: &prompt,
            })
            .map(|(i, a)| (i, a.clone()));
        let (rule, action) = match picked {
            Some((i, a)) => (Some(i), a),
            None => (
                None,
                Action::Respond {
                    literal: None,
                    merge: true,
                    settings: Settings::default(),
                },
            ),
        };
        let mut rng = Rng::for_call(self.seed, index as u64);
        let mut warnings = Vec::new();
        let (outcome, result, error) = match action {
            Action::Respond {
                literal,
                merge,
                settings,
            } => {
                let st = self.scenario.defaults.overlay(&settings);
                let v = match literal {
                    Some(l) if !merge => l,
                    Some(l) => {
                        generate::merge(self.generator.value(schema.as_ref(), &st, &mut rng), &l)
                    }
                    None => self.generator.value(schema.as_ref(), &st, &mut rng),
                };
                if let Some(s) = &schema {
                    warnings = generate::validate(&v, s);
                }
                (Outcome::Result, v, None)
            }
            Action::Fail => (Outcome::Null, Value::Null, None),
            Action::Error(m) => (Outcome::Error, Value::Null, Some(m)),
        };
        let reply = match outcome {
            Outcome::Result => serde_json::json!({"k": "ok", "v": result}),
            Outcome::Null => serde_json::json!({"k": "null"}),
            Outcome::Error => serde_json::json!({"k": "error", "m": error}),
        };
        if let Some(p) = &phase {
            let i = self.enter(p, false);
            self.phases[i].agents.push(index);
        }
        self.agents.push(AgentCall {
            index,
            phase,
            label,
            prompt_bytes: prompt.len(),
            prompt: self.keep_prompts.then_some(prompt),
            schema: schema.as_ref().map(generate::summary),
            schema_json: schema,
            outcome,
            result,
            error,
            rule,
            warnings,
        });
        reply.to_string()
    }
}

pub(super) fn empty_trace(o: &Options) -> Trace {
    Trace {
        status: Status::Completed,
        seed: o.seed.unwrap_or(0),
        args: o.args.clone(),
        limits: o.limits.clone(),
        elapsed_ms: 0,
        phases: Vec::new(),
        phases_not_reached: o.declared_phases.clone(),
        agents: Vec::new(),
        fanouts: Vec::new(),
        logs: Vec::new(),
        logs_dropped: 0,
        missing_globals: Vec::new(),
        unsupported: Vec::new(),
        result: Value::Null,
    }
}

/// A thrown value, described by the prelude (name, message, stack).
struct Thrown {
    name: String,
    message: String,
    stack: Option<String>,
}

fn engine(e: rquickjs::Error) -> SimulateError {
    SimulateError::Engine(e.to_string())
}

pub(super) fn run(
    prepared: &Prepared,
    scenario: Scenario,
    o: &Options,
) -> Result<Trace, SimulateError> {
    let stop: Rc<Cell<Option<Stop>>> = Rc::new(Cell::new(None));
    let deadline = Instant::now() + o.limits.timeout;
    let rt = Runtime::new().map_err(engine)?;
    rt.set_memory_limit(o.limits.memory_bytes);
    rt.set_max_stack_size(STACK_BYTES);
    {
        let stop = stop.clone();
        rt.set_interrupt_handler(Some(Box::new(move || {
            if stop.get().is_some() {
                return true;
            }
            if Instant::now() >= deadline {
                stop.set(Some(Stop::Timeout));
                return true;
            }
            false
        })));
    }
    let context = Context::custom::<Realm>(&rt).map_err(engine)?;
    let host = Rc::new(RefCell::new(Host {
        seed: o.seed.or(scenario.seed).unwrap_or(0),
        scenario,
        generator: Generator::new(),
        max_agents: o.limits.max_agents,
        keep_prompts: o.keep_prompts,
        declared: o.declared_phases.clone(),
        current: None,
        phases: Vec::new(),
        agents: Vec::new(),
        fanouts: Vec::new(),
        logs: Vec::new(),
        logs_dropped: 0,
        unsupported: Vec::new(),
        stop: stop.clone(),
    }));
    let seed = host.borrow().seed;
    let (status, result, globals) =
        context.with(|ctx| drive(&ctx, prepared, &host, o, seed, &stop, deadline))?;
    // The realm's functions hold the host: free them before taking it back.
    drop(context);
    drop(rt);
    let h = Rc::try_unwrap(host)
        .map_err(|_| SimulateError::Engine("the runtime still holds the host".into()))?
        .into_inner();
    let mut missing: Vec<MissingGlobal> = prepared
        .free
        .iter()
        .filter(|(n, _)| !globals.contains(n))
        .map(|(name, line)| MissingGlobal {
            name: name.clone(),
            line: *line,
        })
        .collect();
    if let Status::MissingGlobal { name } = &status
        && !missing.iter().any(|m| &m.name == name)
    {
        missing.push(MissingGlobal {
            name: name.clone(),
            line: 0,
        });
    }
    let reached: Vec<&str> = h.phases.iter().map(|p| p.title.as_str()).collect();
    Ok(Trace {
        status,
        seed,
        args: o.args.clone(),
        limits: o.limits.clone(),
        elapsed_ms: 0,
        phases_not_reached: o
            .declared_phases
            .iter()
            .filter(|d| !reached.contains(&d.as_str()))
            .cloned()
            .collect(),
        phases: h.phases,
        agents: h.agents,
        fanouts: h.fanouts,
        logs: h.logs,
        logs_dropped: h.logs_dropped,
        missing_globals: missing,
        unsupported: h.unsupported,
        result,
    })
}

/// Set up the realm, start the script and run it to the end: drain the
/// promise jobs, then settle the oldest pending agent (or fire a timer),
/// until the script's promise settles or a limit stops it.
fn drive<'js>(
    ctx: &Ctx<'js>,
    prepared: &Prepared,
    host: &Rc<RefCell<Host>>,
    o: &Options,
    seed: u64,
    stop: &Rc<Cell<Option<Stop>>>,
    deadline: Instant,
) -> Result<(Status, Value, Vec<String>), SimulateError> {
    let limit_status = |s: Stop| match s {
        Stop::Timeout => Status::Timeout {
            limit_ms: o.limits.timeout.as_millis() as u64,
        },
        Stop::AgentCap => Status::AgentCap {
            limit: o.limits.max_agents,
        },
    };
    let bindings = Object::new(ctx.clone()).map_err(engine)?;
    let h = host.clone();
    bindings
        .set(
            "agent",
            Function::new(
                ctx.clone(),
                move |prompt: String,
                      label: Option<String>,
                      phase: Option<String>,
                      schema: Option<String>| {
                    h.borrow_mut().agent(prompt, label, phase, schema)
                },
            ),
        )
        .map_err(engine)?;
    let h = host.clone();
    bindings
        .set(
            "phase",
            Function::new(ctx.clone(), move |t: String| h.borrow_mut().phase(t)),
        )
        .map_err(engine)?;
    let h = host.clone();
    bindings
        .set(
            "log",
            Function::new(ctx.clone(), move |m: String, runtime: bool| {
                h.borrow_mut().log(m, runtime)
            }),
        )
        .map_err(engine)?;
    let h = host.clone();
    bindings
        .set(
            "fanout",
            Function::new(ctx.clone(), move |kind: String, size: f64, stages: f64| {
                h.borrow_mut().fanout(kind, size as usize, stages as usize)
            }),
        )
        .map_err(engine)?;
    let h = host.clone();
    bindings
        .set(
            "unsupported",
            Function::new(ctx.clone(), move |name: String| {
                let mut h = h.borrow_mut();
                if !h.unsupported.contains(&name) {
                    h.unsupported.push(name);
                }
            }),
        )
        .map_err(engine)?;

    let prelude: Function = ctx.eval(PRELUDE).map_err(engine)?;
    let args_json = o.args.as_ref().map(|a| a.to_string());
    let driver: Object = prelude
        .call((bindings, args_json, seed as u32 as f64))
        .map_err(engine)?;
    let step: Function = driver.get("step").map_err(engine)?;
    let json: Function = driver.get("json").map_err(engine)?;
    let describe: Function = driver.get("describe").map_err(engine)?;
    let globals: Vec<String> = ctx
        .eval("Object.getOwnPropertyNames(globalThis)")
        .map_err(engine)?;

    // Classify whatever was thrown.
    let thrown = |v: rquickjs::Value<'js>| -> Thrown {
        let d: Option<String> = describe.call((v,)).ok();
        let d: Value = d
            .and_then(|s| serde_json::from_str(&s).ok())
            .unwrap_or(Value::Null);
        Thrown {
            name: d["name"].as_str().unwrap_or("Error").to_string(),
            message: d["message"].as_str().unwrap_or("(unprintable)").to_string(),
            stack: d["stack"].as_str().map(str::to_string),
        }
    };
    let classify = |t: Thrown| -> Status {
        if let Some(s) = stop.get() {
            return limit_status(s);
        }
        if t.message == "out of memory"
            || t.name == "InternalError" && t.message.contains("out of memory")
        {
            return Status::MemoryLimit {
                limit_bytes: o.limits.memory_bytes,
            };
        }
        if t.name == "ReferenceError"
            && let Some(name) = not_defined(&t.message)
        {
            return Status::MissingGlobal { name };
        }
        Status::Threw {
            name: t.name,
            message: t.message,
            stack: t.stack,
        }
    };
    let caught = |e: rquickjs::Error| -> Status {
        if let Some(s) = stop.get() {
            return limit_status(s);
        }
        match e {
            rquickjs::Error::Exception => classify(thrown(ctx.catch())),
            rquickjs::Error::Allocation => Status::MemoryLimit {
                limit_bytes: o.limits.memory_bytes,
            },
            other => Status::Threw {
                name: "EngineError".into(),
                message: other.to_string(),
                stack: None,
            },
        }
    };

    let options = {
        let mut e = rquickjs::context::EvalOptions::default();
        e.global = true;
        e.strict = true;
        e.filename = Some("workflow.js".into());
        e
    };
    let promise: Promise = match ctx.eval_with_options(prepared.source.as_str(), options) {
        Ok(p) => p,
        Err(e) => return Ok((caught(e), Value::Null, globals)),
    };
    loop {
        loop {
            if let Some(s) = stop.get() {
                return Ok((limit_status(s), Value::Null, globals));
            }
            if Instant::now() >= deadline {
                return Ok((limit_status(Stop::Timeout), Value::Null, globals));
            }
            if !ctx.execute_pending_job() {
                break;
            }
        }
        if let Some(s) = stop.get() {
            return Ok((limit_status(s), Value::Null, globals));
        }
        match promise.result::<rquickjs::Value>() {
            Some(Ok(v)) => {
                let text: Option<String> = json.call((v,)).catch(ctx).ok().flatten();
                let result = text
                    .and_then(|t| serde_json::from_str(&t).ok())
                    .unwrap_or(Value::Null);
                return Ok((Status::Completed, result, globals));
            }
            Some(Err(_)) => {
                let reason = ctx.catch();
                return Ok((classify(thrown(reason)), Value::Null, globals));
            }
            None => {}
        }
        match step.call::<_, i32>(()) {
            Ok(0) => return Ok((Status::Stalled, Value::Null, globals)),
            Ok(_) => {}
            Err(e) => return Ok((caught(e), Value::Null, globals)),
        }
    }
}

/// The name in a "… is not defined" ReferenceError.
fn not_defined(message: &str) -> Option<String> {
    let name = message.strip_suffix(" is not defined")?;
    let name = name.trim_matches('\'');
    (!name.is_empty()
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '$'))
    .then(|| name.to_string())
}
