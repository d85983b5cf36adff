// The one-line message a person reads in the CLI's text output and an editor's problem list
// (under about 120 characters: what is wrong, and the fix), next to the finding's long
// `message`, which stays the explanation (PR comments, SARIF, JSON, `hcp-bot explain`).
// A rule may write its own (`summary` in its report); otherwise it is made from the long
// message's first sentence (without the `(file:line)` places written into it, which the
// line's own location already gives) and the fix (its description, or the message's closing
// advice), or the rule's summary when that sentence is too long to be one line.
import type { Fix, Rule } from "../model/finding.ts";

export const SHORT_MESSAGE_MAX = 120;

/** `(recipe.py:14)`, `(recipe.py:25, via recipe x)`: places the location already says. */
const PLACES = /\s*\([^()]*:\d+(?::\d+)?(?:,[^()]*)?\)/g;

/** The message without the places written into it: two reports that differ only there are one finding. */
export function withoutPlaces(message: string): string {
  return message.replace(PLACES, "");
}

export function firstSentence(message: string): string {
  const text = withoutPlaces(message);
  // A sentence ends at ". " or at the end; a '.' inside a quote or a number (2.15.0, 'a.b') is not an end.
  const m = /^(.*?[^.\s])\.(?:\s|$)/s.exec(text);
  return (m ? m[1]! : text.replace(/\.$/, "")).replace(/\s+/g, " ").trim();
}

/** The fix as a clause: "set model.x to [2, 2]", without the parenthesized reasoning. */
function fixClause(fix: Fix): string {
  return lowerFirst(fix.description.replace(/\s*\((?:for|the|placed)\b.*\)$/s, "").replace(/\.$/, ""))!;
}

function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  const cut = text.slice(0, max - 1);
  const space = cut.lastIndexOf(" ");
  return `${(space > max / 2 ? cut.slice(0, space) : cut).replace(/[\s,;:]+$/, "")}…`;
}

/** An imperative last sentence ("Choose sizes whose product is 8.") is the fix when there is no mechanical one. */
const ADVICE = /(?:^|\.\s)((?:Set|Unset|Choose|Use|Remove|Make|Add|Pin|Upgrade|Raise|Lower|Drop|Pass|Give)\b[^.]*(?:\.\d[^.]*)*)\.?\s*$/;

export function shortMessage(rule: Pick<Rule, "name" | "summary">, report: { message: string; fix?: Fix }): string {
  const sentence = firstSentence(report.message);
  const summary = rule.summary ?? rule.name.replace(/-/g, " ");
  const advice = report.fix ? fixClause(report.fix) : lowerFirst(ADVICE.exec(report.message.replace(PLACES, ""))?.[1]);
  // The most specific that fits: the finding's own sentence with the fix, the rule's summary with the fix, the sentence alone.
  // Shorter spellings before the fix is dropped: "set it to …" when the setting to change is the
  // last one the sentence names, then names without `model.` (the settings' usual group).
  const full = `${sentence}: ${advice}`;
  const it = advice && pronounFix(sentence, advice);
  const shorter = [full, ...(it ? [`${sentence}: ${it}`] : []), full.replace(/\bmodel\./g, ""), `${summary}: ${advice}`];
  const candidates = advice ? [...shorter, sentence, summary] : [sentence, summary];
  return candidates.find((c) => c.length <= SHORT_MESSAGE_MAX && !c.startsWith(":")) ?? clip(candidates[0]!, SHORT_MESSAGE_MAX);
}

/** "set it to [2, 2]" for "set model.x to [2, 2]" when model.x is the last setting `sentence` names. */
function pronounFix(sentence: string, advice: string): string | undefined {
  const m = /^set ([a-z]+\.[a-z0-9_]+) to (.+)$/.exec(advice);
  const named = sentence.match(/\b[a-z]+\.[a-z0-9_]+\b/g);
  return m && named?.at(-1) === m[1] ? `set it to ${m[2]}` : undefined;
}

function lowerFirst(text: string | undefined): string | undefined {
  return text ? text.charAt(0).toLowerCase() + text.slice(1) : undefined;
}
