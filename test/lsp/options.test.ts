// The editor server's settings: initializationOptions checked at the boundary (an unusable one
// is named and the defaults used, so the editor still gets diagnostics), over the command line.
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { DEFAULT_DEBOUNCE_MS, readServerFlags, readServerOptions } from "../../src/cli/lsp/options.ts";
import { UsageError } from "../../src/cli/args.ts";

const noFlags = { isolated: false };

describe("readServerOptions", () => {
  it("discovers settings files by default, with the default debounce", () => {
    expect(readServerOptions(undefined, noFlags, () => {})).toEqual({ config: { mode: "discover" }, debounceMs: DEFAULT_DEBOUNCE_MS });
  });

  it("takes config, isolated and debounceMs from initializationOptions, over the command line", () => {
    expect(readServerOptions({ config: "ci/hcp-bot.yml", debounceMs: 200 }, { isolated: true }, () => {})).toEqual({ config: { mode: "isolated" }, debounceMs: 200 });
    expect(readServerOptions({ config: "ci/hcp-bot.yml" }, noFlags, () => {}).config).toEqual({ mode: "file", path: "ci/hcp-bot.yml" });
    expect(readServerOptions({ isolated: false }, { isolated: false, config: "/x/pyproject.toml" }, () => {}).config).toEqual({ mode: "file", path: "/x/pyproject.toml" });
  });

  it("names unusable options in the log and uses the defaults", () => {
    const warnings: string[] = [];
    const options = readServerOptions({ debounceMs: -3, isolated: "yes" }, noFlags, (m) => warnings.push(m));
    expect(options).toEqual({ config: { mode: "discover" }, debounceMs: DEFAULT_DEBOUNCE_MS });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/initializationOptions ignored.*debounceMs/s);
  });
});

describe("readServerFlags", () => {
  it("reads --config (made absolute before the server moves to the workspace) and --isolated", () => {
    expect(readServerFlags(["--stdio", "--config", "a/hcp-bot.yml"])).toEqual({ isolated: false, config: resolve("a/hcp-bot.yml") });
    expect(readServerFlags(["--stdio", "--isolated", "--clientProcessId=12"])).toEqual({ isolated: true });
  });

  it("refuses what it does not take", () => {
    expect(() => readServerFlags(["--stdio", "--socket=5"])).toThrow(UsageError);
    expect(() => readServerFlags(["--stdio", "--config", "x", "--isolated"])).toThrow(/exclude each other/);
  });
});
