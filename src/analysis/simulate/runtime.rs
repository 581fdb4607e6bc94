//! The sandbox: a QuickJS runtime whose every allocation is counted in the
//! run's [`Budget`] (with what the host keeps), a deadline checked by the
//! interrupt handler and by the host's own work, and a context holding only
//! ECMAScript intrinsics — no modules, no file system, network, process or
//! timers of the host, and no compiler: the context has no `Eval`
//! intrinsic, so `eval`, `Function`, `AsyncFunction`, … cannot turn a
//! string into code. The prelude and the script are compiled in a second,
//! short-lived context that has one, and handed over as bytecode. The mock
//! Workflow runtime (prelude.js) calls back into [`Host`], which records the
//! trace and decides each agent's result.

use super::budget::{Budget, Metered, Stop};
use super::generate::{self, Generator, Rng, Settings};
use super::prepare::Prepared;
use super::scenario::{Action, CallKey, Scenario};
use super::*;
use rquickjs::context::intrinsic;
use rquickjs::module::{Declared, WriteOptions};
use rquickjs::{Context, Ctx, Exception, Function, Module, Object, Promise, Runtime};
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

const PRELUDE: &str = include_str!("prelude.js");
/// Log lines kept; a script logging in a loop must not exhaust our memory.
const MAX_LOGS: usize = 10_000;
/// Fan-outs kept, for the same reason.
const MAX_FANOUTS: usize = 10_000;
/// Native stack the engine may use (deep recursion becomes a RangeError).
const STACK_BYTES: usize = 1 << 20;
/// What one kept record (a log line, an agent call, a stage) costs besides
/// its strings: on the high side, as the output repeats field names.
const RECORD: usize = 128;

/// The intrinsics of a bare ECMAScript realm (what the real runtime's
/// context offers), without the engine's extras — and without `Eval`: code
/// generation from strings is off in the engine itself.
type Realm = (
    intrinsic::Date,
    intrinsic::RegExpCompiler,
    intrinsic::RegExp,
    intrinsic::Json,
    intrinsic::Proxy,
    intrinsic::MapSet,
    intrinsic::TypedArrays,
    intrinsic::Promise,
    intrinsic::WeakRef,
);

/// The compiling context: parsing needs `Eval`, and regular expression
/// literals are compiled with the code.
type Compiler = (intrinsic::Eval, intrinsic::RegExpCompiler);

/// Bytes taken from the budget for a value held for a while; given back
/// when dropped unless [`kept`](Held::kept).
struct Held {
    budget: Rc<Budget>,
    bytes: usize,
}

impl Held {
    fn take(budget: &Rc<Budget>, bytes: usize) -> Result<Held, Stop> {
        budget.charge(bytes)?;
        Ok(Held {
            budget: budget.clone(),
            bytes,
        })
    }

    /// The trace keeps what was charged: the charge stays.
    fn kept(mut self) {
        self.bytes = 0;
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        self.budget.release(self.bytes);
    }
}

/// A string copied out of the engine, with its charge.
struct Text {
    text: String,
    held: Held,
}

/// Longest stage title or label kept, in bytes: they name things for
/// people; a longer one is cut (and stages are told apart by what is kept).
/// The prelude cuts first, at 1000 UTF-16 units; this is the host's guard.
const MAX_NAME: usize = 4 << 10;
/// Longest log line kept, in bytes (the prelude cuts at 65536 units).
const MAX_LINE: usize = 256 << 10;

/// Copy a JavaScript string into Rust, up to `max` bytes (cut at a
/// character, marked with `…`). What is copied is charged first, so a
/// string larger than what the run has left is refused without being
/// copied (the engine's own UTF-8 form, when it needs one, is an engine
/// allocation, counted and capped like any other).
fn take(budget: &Rc<Budget>, s: rquickjs::String<'_>, max: usize) -> rquickjs::Result<Text> {
    let c = s.to_cstring()?;
    let all = c.as_str();
    let mut end = all.len().min(max);
    while !all.is_char_boundary(end) {
        end -= 1;
    }
    let cut = end < all.len();
    let held = Held::take(budget, end + if cut { 3 } else { 0 })
        .map_err(|_| rquickjs::Error::Allocation)?;
    // Exactly the charged size (a push past the length would double it).
    let mut text = String::with_capacity(end + if cut { 3 } else { 0 });
    text.push_str(&all[..end]);
    if cut {
        text.push('…');
    }
    Ok(Text { text, held })
}

/// About what `serde_json` needs to hold the value `text` describes: the
/// text, plus a node per value and per object key. Counted before parsing,
/// since `[0,0,0,…]` takes far more room parsed than written.
fn json_cost(text: &str) -> usize {
    let nodes = crate::js::json::values_up_to(text.as_bytes(), usize::MAX);
    text.len() + nodes * 48
}

/// Parse JSON text from the engine, charged first; the charge is kept
/// with the value.
fn parse_json(budget: &Rc<Budget>, text: &str) -> Result<Result<Value, serde_json::Error>, Stop> {
    let held = Held::take(budget, json_cost(text))?;
    match serde_json::from_str(text) {
        Ok(v) => {
            held.kept();
            Ok(Ok(v))
        }
        Err(e) => Ok(Err(e)),
    }
}

/// What a host function throws when the run has been stopped: the engine's
/// "out of memory" for the cap (as if the engine itself had run out), an
/// error naming the limit otherwise. Either way the interrupt handler ends
/// the script next, and the status comes from the budget.
fn stopped(ctx: &Ctx<'_>, why: Stop) -> rquickjs::Error {
    match why {
        Stop::Memory => rquickjs::Error::Allocation,
        Stop::Timeout => Exception::throw_internal(ctx, "stopped by the time limit"),
        Stop::AgentCap => Exception::throw_internal(ctx, "stopped by the agent-call cap"),
    }
}

struct Host {
    budget: Rc<Budget>,
    scenario: Scenario,
    generator: Generator,
    seed: u64,
    max_agents: u32,
    keep_prompts: bool,
    declared: Vec<String>,
    current: Option<Title>,
    phases: Vec<PhaseEvent>,
    /// Index into `phases` by title: a script may mark a million stages.
    phase_index: HashMap<Title, usize>,
    agents: Vec<AgentCall>,
    fanouts: Vec<ParallelFanout>,
    logs: Vec<LogLine>,
    logs_dropped: usize,
    unsupported: Vec<String>,
}

/// Collapse whitespace runs and trim, as the runtime does for labels.
fn squash(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

impl Host {
    /// The stage titled `title`, entered (created when new). Charged: a new
    /// stage's record and title.
    fn enter(&mut self, title: &str, marked: bool) -> Result<usize, Stop> {
        if let Some(&i) = self.phase_index.get(title) {
            self.phases[i].marked |= marked;
            return Ok(i);
        }
        // The shared copy is made while the caller's copy still exists.
        Held::take(&self.budget, RECORD + 2 * title.len())?.kept();
        let index = self.phases.len();
        let t = Title::new(title);
        self.phase_index.insert(t.clone(), index);
        self.phases.push(PhaseEvent {
            index,
            title: t,
            marked,
            declared: self.declared.iter().any(|d| d == title),
            agents: Vec::new(),
        });
        Ok(index)
    }

    /// A reference to a stage from a record: charged as the output will
    /// write the title again.
    fn refer(&self, t: &Option<Title>) -> Result<(), Stop> {
        self.budget.charge(t.as_ref().map_or(0, |t| t.len()))
    }

    fn phase(&mut self, title: Text) -> Result<(), Stop> {
        let i = self.enter(&title.text, true)?;
        self.current = Some(self.phases[i].title.clone());
        Ok(())
    }

    fn log(&mut self, message: Text, runtime: bool) -> Result<(), Stop> {
        if self.logs.len() >= MAX_LOGS {
            self.logs_dropped += 1;
            return Ok(());
        }
        self.budget.charge(RECORD)?;
        self.refer(&self.current)?;
        let Text { text, held } = message;
        held.kept();
        self.logs.push(LogLine {
            phase: self.current.clone(),
            message: text,
            source: if runtime { "runtime" } else { "script" }.into(),
        });
        Ok(())
    }

    fn fanout(&mut self, kind: String, size: usize, stages: usize) -> Result<(), Stop> {
        if self.fanouts.len() < MAX_FANOUTS {
            self.budget.charge(RECORD + kind.len())?;
            self.refer(&self.current)?;
            self.fanouts.push(ParallelFanout {
                index: self.fanouts.len(),
                kind,
                phase: self.current.clone(),
                size,
                stages,
            });
        }
        Ok(())
    }

    /// One `agent()` call: record it and decide its result. Returns the
    /// outcome as JSON for the prelude (`k`: ok / null / error / cap).
    /// Everything kept is charged; `Err` says which limit stopped the run.
    fn agent(
        &mut self,
        prompt: Text,
        label: Option<Text>,
        phase: Option<Text>,
        schema: Option<Text>,
    ) -> Result<String, Stop> {
        if self.agents.len() as u64 >= self.max_agents as u64 {
            self.budget.halt(Stop::AgentCap);
            return Ok(serde_json::json!({"k": "cap", "m": format!("agent call cap reached ({})", self.max_agents)})
                .to_string());
        }
        self.budget.tick()?;
        self.budget.charge(RECORD)?;
        let index = self.agents.len();
        let phase = match phase {
            Some(p) => {
                let i = self.enter(&p.text, false)?;
                Some(self.phases[i].title.clone())
            }
            None => self.current.clone(),
        };
        self.refer(&phase)?;
        let label = squash(match &label {
            Some(l) => &l.text,
            None => {
                let end = prompt
                    .text
                    .char_indices()
                    .nth(60)
                    .map_or(prompt.text.len(), |(i, _)| i);
                &prompt.text[..end]
            }
        });
        self.budget.charge(label.len())?;
        // A schema serde cannot hold (nested past its 128 levels) is said so
        // in the call's warnings; the agent then answers text.
        let mut unread = None;
        let schema: Option<Value> = match &schema {
            Some(s) => match parse_json(&self.budget, &s.text)? {
                Ok(v) => Some(v),
                Err(e) => {
                    unread = Some(format!("the schema could not be read: {e}"));
                    None
                }
            },
            None => None,
        };
        let summary = schema.as_ref().map(generate::summary);
        self.budget
            .charge(summary.as_ref().map_or(0, String::len))?;
        let picked = self.scenario.pick(&CallKey {
            phase: phase.as_deref(),
            label: &label,
            prompt: &prompt.text,
        });
        // A rule's literal result is copied into every call it answers:
        // charged before the copy.
        let (rule, action) = match picked {
            Some((i, a)) => {
                if let Action::Respond {
                    literal: Some(l), ..
                } = a
                {
                    self.budget.charge(generate::cost(l))?;
                }
                (Some(i), a.clone())
            }
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
                let budget = &*self.budget;
                let v = match literal {
                    Some(l) if !merge => l,
                    Some(l) => generate::merge(
                        self.generator
                            .value(schema.as_ref(), &st, &mut rng, budget)?,
                        &l,
                    ),
                    None => self
                        .generator
                        .value(schema.as_ref(), &st, &mut rng, budget)?,
                };
                if let Some(s) = &schema {
                    warnings = generate::validate(&v, s);
                    self.budget.charge(warnings.iter().map(String::len).sum())?;
                }
                (Outcome::Result, v, None)
            }
            Action::Fail => (Outcome::Null, Value::Null, None),
            Action::Error(m) => (Outcome::Error, Value::Null, Some(m)),
        };
        warnings.extend(unread);
        let reply = match outcome {
            Outcome::Result => format!("{{\"k\":\"ok\",\"v\":{result}}}"),
            Outcome::Null => serde_json::json!({"k": "null"}).to_string(),
            Outcome::Error => serde_json::json!({"k": "error", "m": error}).to_string(),
        };
        if let Some(p) = &phase {
            let i = self.enter(p, false)?;
            self.phases[i].agents.push(index);
        }
        let prompt_bytes = prompt.text.len();
        let prompt = if self.keep_prompts {
            prompt.held.kept();
            Some(prompt.text)
        } else {
            None
        };
        self.agents.push(AgentCall {
            index,
            phase,
            label,
            prompt_bytes,
            prompt,
            schema: summary,
            schema_json: schema,
            outcome,
            result,
            error,
            rule,
            warnings,
        });
        Ok(reply)
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

/// How a run that ended early is reported: the limit that stopped it.
fn limit_status(s: Stop, o: &Options) -> Status {
    match s {
        Stop::Timeout => Status::Timeout {
            limit_ms: o.limits.timeout.as_millis() as u64,
        },
        Stop::Memory => Status::MemoryLimit {
            limit_bytes: o.limits.memory_bytes,
        },
        Stop::AgentCap => Status::AgentCap {
            limit: o.limits.max_agents,
        },
    }
}

/// The prelude's and the script's bytecode.
type Bytecode = (Vec<u8>, Vec<u8>);

/// The prelude and the script, compiled to bytecode in a context that can
/// compile (the sandbox's cannot). `Err` is the status when the script
/// does not compile, or compiling passed a limit.
fn compile(
    rt: &Runtime,
    budget: &Budget,
    prepared: &Prepared,
    o: &Options,
) -> Result<Result<Bytecode, Status>, SimulateError> {
    let compiler = match Context::custom::<Compiler>(rt) {
        Ok(c) => c,
        Err(_) if budget.stopped().is_some() => {
            return Ok(Err(limit_status(
                budget.stopped().unwrap_or(Stop::Memory),
                o,
            )));
        }
        Err(e) => return Err(engine(e)),
    };
    compiler.with(|ctx| {
        let one = |name: &str, source: String| -> Result<Result<Vec<u8>, Status>, SimulateError> {
            let compiled = Module::<Declared>::declare(ctx.clone(), name, source)
                .and_then(|m| m.write(WriteOptions::default()));
            match compiled {
                Ok(bytes) => Ok(Ok(bytes)),
                Err(_) if budget.stopped().is_some() => Ok(Err(limit_status(
                    budget.stopped().unwrap_or(Stop::Memory),
                    o,
                ))),
                Err(rquickjs::Error::Exception) => {
                    let e = ctx.catch();
                    let (name, message, stack) = match e.as_exception() {
                        Some(x) => (
                            x.get::<_, String>("name")
                                .unwrap_or_else(|_| "SyntaxError".into()),
                            x.message().unwrap_or_default(),
                            x.stack(),
                        ),
                        None => ("SyntaxError".into(), String::new(), None),
                    };
                    Ok(Err(Status::Threw {
                        name,
                        message,
                        stack,
                    }))
                }
                Err(e) => Err(engine(e)),
            }
        };
        // Each becomes a module whose default export is what the engine
        // used to evaluate it to; the text is unchanged otherwise, so line
        // numbers stay the file's.
        let prelude = match one("prelude.js", format!("export default {PRELUDE}"))? {
            Ok(b) => b,
            Err(s) => return Ok(Err(s)),
        };
        let script = match one("workflow.js", format!("export default {}", prepared.source))? {
            Ok(b) => b,
            Err(s) => return Ok(Err(s)),
        };
        Ok(Ok((prelude, script)))
    })
}

pub(super) fn run(
    prepared: &Prepared,
    scenario: Scenario,
    o: &Options,
) -> Result<Trace, SimulateError> {
    let budget = Rc::new(Budget::new(o.limits.memory_bytes, o.limits.timeout));
    // Ended before the script ran: nothing recorded but the status.
    let early = |status: Status| {
        let mut t = empty_trace(o);
        t.status = status;
        t
    };
    let rt = match Runtime::new_with_alloc(Metered(budget.clone())) {
        Ok(rt) => rt,
        Err(_) if budget.stopped().is_some() => {
            return Ok(early(limit_status(Stop::Memory, o)));
        }
        Err(e) => return Err(engine(e)),
    };
    rt.set_max_stack_size(STACK_BYTES);
    {
        let budget = budget.clone();
        // Also true once the budget recorded any stop (the memory cap, the
        // agent cap): the script ends at its next check.
        rt.set_interrupt_handler(Some(Box::new(move || budget.tick().is_err())));
    }
    let (prelude, script) = match compile(&rt, &budget, prepared, o)? {
        Ok(c) => c,
        Err(status) => return Ok(early(status)),
    };
    let context = match Context::custom::<Realm>(&rt) {
        Ok(c) => c,
        Err(_) if budget.stopped().is_some() => {
            return Ok(early(limit_status(Stop::Memory, o)));
        }
        Err(e) => return Err(engine(e)),
    };
    let host = Rc::new(RefCell::new(Host {
        budget: budget.clone(),
        seed: o.seed.or(scenario.seed).unwrap_or(0),
        scenario,
        generator: Generator::new(),
        max_agents: o.limits.max_agents,
        keep_prompts: o.keep_prompts,
        declared: o.declared_phases.clone(),
        current: None,
        phases: Vec::new(),
        phase_index: HashMap::new(),
        agents: Vec::new(),
        fanouts: Vec::new(),
        logs: Vec::new(),
        logs_dropped: 0,
        unsupported: Vec::new(),
    }));
    let seed = host.borrow().seed;
    let Ending {
        status,
        result,
        globals,
    } = context.with(|ctx| drive(&ctx, &prelude, &script, &host, o, seed, &budget))?;
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
    let reached: Vec<&str> = h.phases.iter().map(|p| &*p.title).collect();
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

/// How a driven run ended: its status, the script's result (as JSON) and
/// the globals the realm defines.
struct Ending {
    status: Status,
    result: Value,
    globals: Vec<String>,
}

impl Ending {
    /// An ending without a result.
    fn bare(status: Status, globals: Vec<String>) -> Ending {
        Ending {
            status,
            result: Value::Null,
            globals,
        }
    }
}

/// What the prelude hands the host: a step of the mock runtime (settle
/// an agent or fire a timer), the result writer, the describer of thrown
/// values, and the globals it defines.
struct Driver<'js> {
    step: Function<'js>,
    json: Function<'js>,
    describe: Function<'js>,
    globals: Vec<String>,
}

/// Install the host functions, load the prelude and start it with the
/// arguments and the seed.
fn start<'js>(
    ctx: &Ctx<'js>,
    prelude: &[u8],
    host: &Rc<RefCell<Host>>,
    o: &Options,
    seed: u64,
    budget: &Rc<Budget>,
) -> rquickjs::Result<Driver<'js>> {
    let bindings = install(ctx, host, budget)?;
    let prelude: Function = load(ctx, prelude)?;
    let args_json = o.args.as_ref().map(|a| a.to_string());
    let driver: Object = prelude.call((bindings, args_json, seed as u32 as f64))?;
    Ok(Driver {
        step: driver.get::<_, Function>("step")?,
        json: driver.get::<_, Function>("json")?,
        describe: driver.get::<_, Function>("describe")?,
        globals: driver.get::<_, Vec<String>>("globals")?,
    })
}

/// Turns what stopped the script (a thrown value, an engine error, a
/// limit) into its status.
struct Judge<'a, 'js> {
    ctx: &'a Ctx<'js>,
    describe: &'a Function<'js>,
    budget: &'a Rc<Budget>,
    o: &'a Options,
}

impl<'js> Judge<'_, 'js> {
    /// Describe whatever was thrown.
    fn thrown(&self, v: rquickjs::Value<'js>) -> Thrown {
        let d: Option<rquickjs::String> = self.describe.call((v,)).ok();
        let d: Value = d
            .and_then(|s| take(self.budget, s, usize::MAX).ok())
            .and_then(|t| serde_json::from_str(&t.text).ok())
            .unwrap_or(Value::Null);
        Thrown {
            name: d["name"].as_str().unwrap_or("Error").to_string(),
            message: d["message"].as_str().unwrap_or("(unprintable)").to_string(),
            stack: d["stack"].as_str().map(str::to_string),
        }
    }

    fn classify(&self, t: Thrown) -> Status {
        if let Some(s) = self.budget.stopped() {
            return limit_status(s, self.o);
        }
        // The engine's own out-of-memory (a size it refuses whatever the
        // cap, or the error it throws when it cannot even build one).
        if t.message == "out of memory"
            || t.name == "InternalError" && t.message.contains("out of memory")
        {
            return limit_status(Stop::Memory, self.o);
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
    }

    fn caught(&self, e: rquickjs::Error) -> Status {
        if let Some(s) = self.budget.stopped() {
            return limit_status(s, self.o);
        }
        match e {
            rquickjs::Error::Exception => self.classify(self.thrown(self.ctx.catch())),
            rquickjs::Error::Allocation => limit_status(Stop::Memory, self.o),
            other => Status::Threw {
                name: "EngineError".into(),
                message: other.to_string(),
                stack: None,
            },
        }
    }

    /// The script's promise resolved to `v`: its result, written as JSON by
    /// the engine under the interrupt handler (a toJSON, getter or Proxy
    /// that never returns is stopped by the deadline like any other code).
    fn result(
        &self,
        json: &Function<'js>,
        v: rquickjs::Value<'js>,
        globals: Vec<String>,
    ) -> Ending {
        let budget = self.budget;
        let text: Option<rquickjs::String> = match json.call((v,)) {
            Ok(t) => t,
            Err(e) => {
                let status = match self.caught(e) {
                    Status::Threw {
                        name,
                        message,
                        stack,
                    } => Status::Threw {
                        name,
                        message: format!("writing the result as JSON: {message}"),
                        stack,
                    },
                    other => other,
                };
                return Ending::bare(status, globals);
            }
        };
        let Some(text) = text else {
            return Ending::bare(Status::Completed, globals);
        };
        let parsed = take(budget, text, usize::MAX)
            .map_err(|_| budget.stopped().unwrap_or(Stop::Memory))
            .and_then(|t| parse_json(budget, &t.text));
        match parsed {
            Ok(Ok(v)) => Ending {
                status: Status::Completed,
                result: v,
                globals,
            },
            Ok(Err(e)) => Ending::bare(
                Status::Threw {
                    name: "ResultError".into(),
                    message: format!("the result cannot be recorded as JSON: {e}"),
                    stack: None,
                },
                globals,
            ),
            Err(s) => Ending::bare(limit_status(s, self.o), globals),
        }
    }
}

/// Set up the realm, start the script and run it to the end: drain the
/// promise jobs, then settle the oldest pending agent (or fire a timer),
/// until the script's promise settles or a limit stops it.
fn drive<'js>(
    ctx: &Ctx<'js>,
    prelude: &[u8],
    script: &[u8],
    host: &Rc<RefCell<Host>>,
    o: &Options,
    seed: u64,
    budget: &Rc<Budget>,
) -> Result<Ending, SimulateError> {
    let Driver {
        step,
        json,
        describe,
        globals,
    } = match start(ctx, prelude, host, o, seed, budget) {
        Ok(d) => d,
        // Before anything runs: a failure to set up under a stop is that stop.
        Err(e) => {
            return match budget.stopped() {
                Some(s) => Ok(Ending::bare(limit_status(s, o), Vec::new())),
                None => Err(engine(e)),
            };
        }
    };
    let judge = Judge {
        ctx,
        describe: &describe,
        budget,
        o,
    };
    let promise: Promise = match load(ctx, script) {
        Ok(p) => p,
        Err(e) => return Ok(Ending::bare(judge.caught(e), globals)),
    };
    loop {
        loop {
            if let Err(s) = budget.tick() {
                return Ok(Ending::bare(limit_status(s, o), globals));
            }
            if !ctx.execute_pending_job() {
                break;
            }
        }
        if let Err(s) = budget.tick() {
            return Ok(Ending::bare(limit_status(s, o), globals));
        }
        match promise.result::<rquickjs::Value>() {
            Some(Ok(v)) => return Ok(judge.result(&json, v, globals)),
            Some(Err(_)) => {
                let reason = ctx.catch();
                return Ok(Ending::bare(judge.classify(judge.thrown(reason)), globals));
            }
            None => {}
        }
        match step.call::<_, i32>(()) {
            Ok(0) => return Ok(Ending::bare(Status::Stalled, globals)),
            Ok(_) => {}
            Err(e) => return Ok(Ending::bare(judge.caught(e), globals)),
        }
    }
}

/// Load compiled module bytecode into the sandbox, run it, and return its
/// default export.
fn load<'js, T: rquickjs::FromJs<'js>>(ctx: &Ctx<'js>, bytes: &[u8]) -> rquickjs::Result<T> {
    // SAFETY: the bytes are bytecode this runtime's compiler wrote a moment
    // ago (see `compile`), never bytes from outside.
    let m = unsafe { Module::load(ctx.clone(), bytes) }?;
    let (m, _) = m.eval()?;
    m.get("default")
}

/// The host functions the prelude builds the mock runtime on. Strings
/// cross as engine strings and are copied by [`take`], charged.
fn install<'js>(
    ctx: &Ctx<'js>,
    host: &Rc<RefCell<Host>>,
    budget: &Rc<Budget>,
) -> rquickjs::Result<Object<'js>> {
    type S<'js> = rquickjs::String<'js>;
    // Each host function looks at the clock first: the engine polls its
    // interrupt handler only every few thousand operations, and one call
    // here can copy a long string.
    let bindings = Object::new(ctx.clone())?;
    let (h, b) = (host.clone(), budget.clone());
    bindings.set(
        "agent",
        Function::new(
            ctx.clone(),
            move |ctx: Ctx<'js>,
                  prompt: S<'js>,
                  label: Option<S<'js>>,
                  phase: Option<S<'js>>,
                  schema: Option<S<'js>>|
                  -> rquickjs::Result<S<'js>> {
                b.tick().map_err(|s| stopped(&ctx, s))?;
                // The prompt whole: scenario patterns search all of it.
                let prompt = take(&b, prompt, usize::MAX)?;
                let label = label.map(|s| take(&b, s, MAX_NAME)).transpose()?;
                let phase = phase.map(|s| take(&b, s, MAX_NAME)).transpose()?;
                let schema = schema.map(|s| take(&b, s, usize::MAX)).transpose()?;
                let reply = h
                    .borrow_mut()
                    .agent(prompt, label, phase, schema)
                    .map_err(|s| stopped(&ctx, s))?;
                // Held while the engine makes its own copy.
                let _held = Held::take(&b, reply.len()).map_err(|s| stopped(&ctx, s))?;
                S::from_str(ctx, &reply)
            },
        ),
    )?;
    let (h, b) = (host.clone(), budget.clone());
    bindings.set(
        "phase",
        Function::new(
            ctx.clone(),
            move |ctx: Ctx<'js>, t: S<'js>| -> rquickjs::Result<()> {
                b.tick().map_err(|s| stopped(&ctx, s))?;
                let t = take(&b, t, MAX_NAME)?;
                h.borrow_mut().phase(t).map_err(|s| stopped(&ctx, s))
            },
        ),
    )?;
    let (h, b) = (host.clone(), budget.clone());
    bindings.set(
        "log",
        Function::new(
            ctx.clone(),
            move |ctx: Ctx<'js>, m: S<'js>, runtime: bool| -> rquickjs::Result<()> {
                b.tick().map_err(|s| stopped(&ctx, s))?;
                // Past the kept lines only the count grows: nothing copied.
                if h.borrow().logs.len() >= MAX_LOGS {
                    h.borrow_mut().logs_dropped += 1;
                    return Ok(());
                }
                let m = take(&b, m, MAX_LINE)?;
                h.borrow_mut().log(m, runtime).map_err(|s| stopped(&ctx, s))
            },
        ),
    )?;
    let (h, b) = (host.clone(), budget.clone());
    bindings.set(
        "fanout",
        Function::new(
            ctx.clone(),
            move |ctx: Ctx<'js>, kind: S<'js>, size: f64, stages: f64| -> rquickjs::Result<()> {
                b.tick().map_err(|s| stopped(&ctx, s))?;
                let kind = take(&b, kind, MAX_NAME)?;
                h.borrow_mut()
                    .fanout(kind.text.clone(), size as usize, stages as usize)
                    .map_err(|s| stopped(&ctx, s))
            },
        ),
    )?;
    let (h, b) = (host.clone(), budget.clone());
    bindings.set(
        "unsupported",
        Function::new(
            ctx.clone(),
            move |ctx: Ctx<'js>, name: S<'js>| -> rquickjs::Result<()> {
                b.tick().map_err(|s| stopped(&ctx, s))?;
                let name = take(&b, name, MAX_NAME)?;
                let mut h = h.borrow_mut();
                if !h.unsupported.contains(&name.text) {
                    h.budget
                        .charge(name.text.len())
                        .map_err(|s| stopped(&ctx, s))?;
                    h.unsupported.push(name.text);
                }
                Ok(())
            },
        ),
    )?;
    Ok(bindings)
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
