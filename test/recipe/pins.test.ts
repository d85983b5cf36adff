import { describe, expect, it } from "vitest";
import { compareVersions, extractTePins, isTeAtLeast } from "../../src/core/recipe/pins.ts";
import { fixture, pos } from "./helpers.ts";

function pinsOf(rel: string) {
  const f = fixture(rel);
  return { f, pins: extractTePins(f).tePins };
}

describe("Transformer Engine pins", () => {
  it("uv.lock: the transformer-engine package version, not its look-alikes", () => {
    const { f, pins } = pinsOf("pins/uvlock/uv.lock");
    expect(pins).toHaveLength(1);
    expect(pins[0]).toMatchObject({ version: "2.18.0", source: "uv.lock" });
    const at = pos(f.text, "2.18.0+e7c550c5");
    expect(pins[0]?.location.range.start).toEqual(at);
    expect(pins[0]?.location.range.end.offset).toBe(at.offset + "2.18.0+e7c550c5".length);
  });

  it("pyproject (seed era): ==, git ref release_v2.15, comments ignored", () => {
    const { f, pins } = pinsOf("pins/pyproject_seed/pyproject.toml");
    expect(pins.map((p) => p.version)).toEqual(["2.4.0", "2.15"]);
    expect(pins[1]?.source).toMatch(/pyproject\.toml.*git ref/);
    const ref = pins[1]!.location.range;
    expect(f.text.slice(ref.start.offset, ref.end.offset)).toBe("2.15");
    expect(ref.start.line).toBe(pos(f.text, "release_v2.15").line);
  });

  it("pyproject (HEAD): >= specifier and dependency-metadata; a commit rev is no version", () => {
    const { f, pins } = pinsOf("pins/pyproject_meta/pyproject.toml");
    expect(pins.map((p) => p.version)).toEqual(["2.12", "2.18.0"]);
    expect(pins[0]?.source).toContain(">=");
    expect(pins[1]?.source).toContain("dependency-metadata");
    const r = pins[1]!.location.range;
    expect(f.text.slice(r.start.offset, r.end.offset)).toBe("2.18.0+e7c550c5");
  });

  it("requirements.txt", () => {
    const { f, pins } = pinsOf("pins/requirements/requirements-te.txt");
    expect(pins).toHaveLength(1);
    expect(pins[0]).toMatchObject({ version: "1.11.0", source: "requirements.txt ==" });
    expect(pins[0]?.location.range.start).toEqual(pos(f.text, "1.11.0"));
  });

  it("Dockerfile: ARG TE_VERSION and pip install; BASE_IMAGE alone says nothing", () => {
    const { pins } = pinsOf("pins/docker/Dockerfile");
    expect(pins.map((p) => [p.version, p.source])).toEqual([
      ["1.12.0", "Dockerfile ARG/ENV"],
      ["1.13.0", "Dockerfile pip install =="],
    ]);
    expect(pinsOf("pins/docker_base/Dockerfile.ci").pins).toEqual([]);
  });

  it("ignores files of other kinds and bad input", () => {
    expect(extractTePins({ path: "README.md", text: "transformer_engine==1.0" }).tePins).toEqual([]);
    expect(extractTePins({ path: "uv.lock", text: "" }).tePins).toEqual([]);
    expect(extractTePins({ path: "uv.lock", text: "\u0000\u0001" }).diagnostics[0]?.code).toBe("unreadable");
    expect(() => extractTePins({ path: "pyproject.toml", text: "[[[\nname = \"transformer-engine\nversion=" })).not.toThrow();
  });
});

describe("version comparison", () => {
  it.each([
    ["2.15", "2.15.0", 0],
    ["2.15.0+42b84005", "2.15", 0],
    ["1.12.0", "1.11.9", 1],
    ["2.9", "2.18", -1],
    ["v2.19", "2.18.0", 1],
  ])("%s vs %s", (a, b, want) => {
    expect(compareVersions(a, b)).toBe(want);
  });

  it("isTeAtLeast", () => {
    expect(isTeAtLeast("1.12.0", "1.12")).toBe(true);
    expect(isTeAtLeast("2.18.0", "2.19")).toBe(false);
  });
});
