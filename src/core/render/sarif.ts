// SARIF 2.1.0, so findings can be uploaded to GitHub code scanning (or any SARIF viewer).
import type { Log, ReportingDescriptor, Result } from "sarif";
import type { Finding, Rule } from "../model/finding.ts";
import type { Edit } from "../model/source.ts";
import type { Diagnostic } from "../recipe/types.ts";

const LEVEL = { error: "error", warning: "warning", info: "note" } as const;

export interface SarifOptions {
  toolVersion: string;
  rules: readonly Rule[];
  /** Each rule's documentation page (src/core/rules/doc-url.ts), as `helpUri`; none when absent or undefined. */
  docUrl?: (ruleId: string) => string | undefined;
}

function region(range: Edit["range"]) {
  return {
    startLine: range.start.line,
    startColumn: range.start.column,
    endLine: range.end.line,
    endColumn: range.end.column,
  };
}

function artifact(uri: string) {
  return { uri: encodeURI(uri), uriBaseId: "%SRCROOT%" };
}

function ruleDescriptor(rule: Rule, docUrl: SarifOptions["docUrl"]): ReportingDescriptor {
  const helpUri = docUrl?.(rule.id);
  return {
    id: rule.id,
    name: rule.name,
    shortDescription: { text: rule.doc.checks.split("\n")[0] ?? rule.name },
    fullDescription: { text: rule.doc.checks },
    help: {
      text: `${rule.doc.why}\n\nExample:\n${rule.doc.example}\n\nFix:\n${rule.doc.fix}`,
      markdown: `${rule.doc.why}\n\n**Example**\n\n\`\`\`\n${rule.doc.example}\n\`\`\`\n\n**Fix**\n\n${rule.doc.fix}`,
    },
    defaultConfiguration: { level: LEVEL[rule.severity] },
    ...(helpUri ? { helpUri } : {}),
  };
}

function result(f: Finding, ruleIndex: number): Result {
  const r: Result = {
    ruleId: f.ruleId,
    level: LEVEL[f.severity],
    message: { text: f.message },
    locations: [{ physicalLocation: { artifactLocation: artifact(f.location.file), region: region(f.location.range) } }],
    properties: { unit: f.unitName },
  };
  if (ruleIndex >= 0) r.ruleIndex = ruleIndex;
  if (f.related.length) {
    r.relatedLocations = f.related.map((rel, id) => ({
      id,
      message: { text: rel.message },
      physicalLocation: { artifactLocation: artifact(rel.location.file), region: region(rel.location.range) },
    }));
  }
  if (f.fix && f.fix.edits.length) {
    const byFile = new Map<string, Edit[]>();
    for (const e of f.fix.edits) byFile.set(e.file, [...(byFile.get(e.file) ?? []), e]);
    r.fixes = [
      {
        description: { text: f.fix.description },
        artifactChanges: [...byFile].map(([file, edits]) => ({
          artifactLocation: artifact(file),
          replacements: edits.map((e) => ({ deletedRegion: region(e.range), insertedContent: { text: e.newText } })),
        })),
      },
    ];
  }
  return r;
}

export function toSarif(findings: readonly Finding[], diagnostics: readonly Diagnostic[], options: SarifOptions): Log {
  const index = new Map(options.rules.map((r, i) => [r.id, i]));
  return {
    $schema: "https://json.schemastore.org/sarif-2.1.0.json",
    version: "2.1.0",
    runs: [
      {
        tool: { driver: { name: "hcp-bot", version: options.toolVersion, rules: options.rules.map((r) => ruleDescriptor(r, options.docUrl)) } },
        columnKind: "utf16CodeUnits",
        results: findings.map((f) => result(f, index.get(f.ruleId) ?? -1)),
        invocations: [
          {
            executionSuccessful: true,
            toolExecutionNotifications: diagnostics.map((d) => ({
              level: LEVEL[d.severity],
              message: { text: `${d.code}: ${d.message}` },
              locations: [
                {
                  physicalLocation: {
                    artifactLocation: artifact(d.file),
                    ...(d.location ? { region: region(d.location.range) } : {}),
                  },
                },
              ],
            })),
          },
        ],
      },
    ],
  };
}
