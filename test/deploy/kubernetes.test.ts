// deploy/kubernetes.yaml, parsed: two replicas sharing one Redis, the secrets they read,
// readiness and liveness on /healthz, and a drain that ends inside the termination grace.
// The environment the pods get is read by the bot's own settings parser, so a variable the
// bot would refuse (or a REDIS_URL pointing at another service) fails here, not in a cluster.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseAllDocuments } from "yaml";
import { describe, expect, it } from "vitest";
import { readSettings } from "../../src/github/settings.ts";
import { appKeys } from "../support/bot-harness.ts";

interface K8s {
  kind: string;
  metadata: { name: string };
  spec?: Record<string, unknown> & { selector?: { matchLabels?: Record<string, string> } & Record<string, string> };
  stringData?: Record<string, string>;
}
type Container = {
  name: string;
  args?: string[];
  ports?: { containerPort: number }[];
  envFrom?: { secretRef: { name: string } }[];
  env?: { name: string; value?: string }[];
  readinessProbe?: { httpGet?: { path: string; port: number } };
  livenessProbe?: { httpGet?: { path: string; port: number }; failureThreshold?: number };
};
type PodSpec = { terminationGracePeriodSeconds?: number; containers: Container[] };

const file = join(import.meta.dirname, "..", "..", "deploy", "kubernetes.yaml");
const docs = parseAllDocuments(readFileSync(file, "utf8"));
const objects = docs.map((d) => {
  expect(d.errors).toEqual([]);
  return d.toJS() as K8s;
});
const find = (kind: string, name: string) => objects.find((o) => o.kind === kind && o.metadata.name === name);

describe("deploy/kubernetes.yaml", () => {
  const deployment = find("Deployment", "hcp-bot")!;
  const pod = (deployment.spec!.template as { metadata: { labels: Record<string, string> }; spec: PodSpec }).spec;
  const bot = pod.containers[0]!;
  const secret = find("Secret", "hcp-bot")!;

  it("runs two replicas of the server, with readiness and liveness on /healthz at the container's port", () => {
    expect(deployment.spec!.replicas).toBe(2);
    expect(bot.args).toEqual(["serve"]);
    const port = bot.ports![0]!.containerPort;
    expect(bot.readinessProbe?.httpGet).toEqual({ path: "/healthz", port });
    expect(bot.livenessProbe?.httpGet).toEqual({ path: "/healthz", port });
    expect(bot.env).toContainEqual({ name: "PORT", value: String(port) });
  });

  it("gives the pods an environment the bot accepts: the App's credentials and REDIS_URL from the Secret", () => {
    expect(bot.envFrom).toEqual([{ secretRef: { name: "hcp-bot" } }]);
    const env: Record<string, string> = { ...secret.stringData, PRIVATE_KEY: appKeys.privateKey };
    for (const e of bot.env ?? []) env[e.name] = e.value!;
    const settings = readSettings(env, undefined);
    expect(settings.mode).toBe("app");
    expect(settings.redis?.url).toMatch(/^redis:\/\//);
    expect(settings.slack).toBeDefined();
    // The Redis the URL names is the Service in this file, with the password the Redis is given.
    const redisUrl = new URL(settings.redis!.url);
    expect(find("Service", redisUrl.hostname)).toBeDefined();
    expect(decodeURIComponent(redisUrl.password)).toBe(secret.stringData!.REDIS_PASSWORD);
  });

  it("drains within the termination grace", () => {
    const drain = Number(bot.env!.find((e) => e.name === "HCP_DRAIN_SECONDS")!.value);
    expect(drain + 5).toBeLessThanOrEqual(pod.terminationGracePeriodSeconds!);
  });

  it("runs one Redis with its append-only file on a volume, behind the Service the bot uses", () => {
    const redis = find("StatefulSet", "hcp-bot-redis")!;
    const container = (redis.spec!.template as { spec: PodSpec }).spec.containers[0]!;
    expect(container.args).toEqual(expect.arrayContaining(["--appendonly", "yes"]));
    expect(redis.spec!.volumeClaimTemplates).toBeDefined();
    for (const [service, target] of [["hcp-bot-redis", redis], ["hcp-bot", deployment]] as const) {
      const labels = (target.spec!.template as { metadata: { labels: Record<string, string> } }).metadata.labels;
      expect(find("Service", service)!.spec!.selector).toEqual(labels);
      expect(target.spec!.selector!.matchLabels).toEqual(labels);
    }
  });
});
