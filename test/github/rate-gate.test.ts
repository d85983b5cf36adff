// Which pause a GitHub call waits on: an installation's own, or the app-wide one for the
// calls that go out with the app's JWT (GitHub limits those per app).
import { describe, expect, it } from "vitest";
import { scopeOf } from "../../src/github/rate-gate.ts";

describe("scopeOf", () => {
  it("puts an installation client's calls in that installation, and JWT calls (/app, an app client's) app-wide", () => {
    expect(scopeOf(12, "/repos/{owner}/{repo}/pulls/{pull_number}/files")).toBe("installation:12");
    expect(scopeOf(12, "POST /repos/{owner}/{repo}/check-runs")).toBe("installation:12");
    expect(scopeOf(12, "/app/installations/{installation_id}/access_tokens")).toBe("app");
    expect(scopeOf(12, "GET /app")).toBe("app");
    expect(scopeOf(12, "/apples")).toBe("installation:12");
    expect(scopeOf(undefined, "/repos/{owner}/{repo}/installation")).toBe("app");
    expect(scopeOf("12", "/repos/o/r")).toBe("app");
  });
});
