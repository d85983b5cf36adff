// A small abstract interpreter for the Python that recipes are written in: assignments,
// attribute chains, dicts and kwargs, calls to functions of the same module (and of other
// modules of the analyzed tree, through the library), constructors, dataclasses.replace,
// integer arithmetic and if/else. Anything else evaluates to an unknown value that says
// why; nothing is guessed.
//
// The parts live in eval/: expressions, statements, calls and builders, containers; this
// class is the entry point the unit extractor uses.
import type { ModuleLibrary } from "./library.ts";
import type { ClassDef, FnDef, ModuleInfo, ParamInfo } from "./module.ts";
import type { PyNode } from "./tree.ts";
import { unk, type V } from "./values.ts";
import { bindParams, classDefaults } from "./eval/calls.ts";
import { ev, lookupConstant } from "./eval/expressions.ts";
import { Machine, newFrame, type EvalNote, type Frame, type Status } from "./eval/machine.ts";
import { execBlock } from "./eval/statements.ts";

export { BudgetExceeded, FILE_STEP_BUDGET, FileBudgetExceeded, type EvalNote, type Frame } from "./eval/machine.ts";

export class Evaluator {
  private readonly m: Machine;

  constructor(mod: ModuleInfo, library?: ModuleLibrary) {
    this.m = new Machine(mod, library);
  }

  get notes(): EvalNote[] {
    return this.m.notes;
  }

  /** Fresh state for the next unit: module objects are mutable, so no unit sees another's changes. */
  reset(): void {
    this.m.reset();
  }

  /** Runs a recipe function with its defaults; returns the frame (its `ret` is the result). */
  runUnitFunction(fn: FnDef): { frame: Frame; status: Status } {
    const frame = newFrame(true);
    bindParams(this.m, fn, frame, { pos: [], kw: new Map(), open: null });
    this.m.active.push(fn);
    const status = execBlock(this.m, fn.body.c, frame);
    this.m.active.pop();
    return { frame, status };
  }

  /** Runs statements of the module itself (a script's top level and its `__main__` block) as one unit. */
  runStatements(stmts: readonly PyNode[]): { frame: Frame; status: Status } {
    const frame = newFrame(true);
    const status = execBlock(this.m, stmts, frame);
    return { frame, status };
  }

  /** A parameter's default, as the recipe sees it when called without arguments. */
  parameterDefault(p: ParamInfo): V | undefined {
    return p.def ? ev(this.m, p.def, this.m.moduleFrame(), "parameter-default") : undefined;
  }

  constantValue(name: string, use: PyNode): V {
    return lookupConstant(this.m, name, use, "assignment") ?? unk(`${name} is not a module constant`, this.m.org(use, "assignment"));
  }

  /** Field defaults of a dataclass body, base classes first. */
  classDefaults(cls: ClassDef): Map<string, V> {
    return classDefaults(this.m, cls);
  }
}
