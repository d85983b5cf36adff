// The library entry point (`import { analyze } from "hcp-bot"`): the runtime-neutral core,
// the same code the CLI, the GitHub App and the Slack app run. Nothing here touches the file
// system or the network; on Node, `hcp-bot/node` loads the Python grammar and reads files.
export { analyze, extractFiles, judge, type AnalysisReport, type AnalyzeOptions } from "./core/analyze/index.ts";
export { classifyFile, type FileKind } from "./core/analyze/classify.ts";
export { ALL_RULES, ruleById } from "./core/rules/index.ts";
export type { Finding, Fix, Rule, RuleDoc, Severity, ProjectFacts } from "./core/model/finding.ts";
export type { SourceFile } from "./core/model/source.ts";
export type { Diagnostic } from "./core/recipe/types.ts";
export { formatReportText, formatRuleDoc, formatRuleList } from "./core/render/text.ts";
export { formatReportGithub } from "./core/render/github.ts";
export { toSarif } from "./core/render/sarif.ts";
export { hierarchicalSplit, recommendLayout, type CpCommType, type Layout, type LayoutInput } from "./core/advise/layout.ts";
export { adviseLayout, AdviseError, candidateText, type Advice, type AdviseInput, type Rejected } from "./core/advise/advise.ts";
export { rankGrid, type RankGrid, type RankGridInput } from "./core/advise/ranks.ts";
export { pictureOf, proposedPicture, type Picture, type GroupSet } from "./core/render/layout/picture.ts";
export { advicePicture, formatAdviceMarkdown, formatAdviceText } from "./core/render/layout/advice.ts";
export { formatLayoutGrid } from "./core/render/layout/text.ts";
export { formatLayoutSvg } from "./core/render/layout/svg.ts";
export { formatLayoutMermaid } from "./core/render/layout/mermaid.ts";
export { createVerdictParser, formatVerdict, verdictOf, type Verdict, type VerdictParser } from "./core/verdict/index.ts";
export { VERSION } from "./version.ts";
