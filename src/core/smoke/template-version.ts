// Apart from workflow.ts (the reader, with its YAML parser) so that /healthz can say which
// template this hcp-bot renders without loading it.
/**
 * The version of templates/hcp-smoke.yml this hcp-bot renders. Raise it whenever the template
 * changes what the bot can send or what the workflow does; a workflow with a lower (or no)
 * version is reported as older than the bot. 1 is every rendering before the version was written.
 */
export const WORKFLOW_TEMPLATE_VERSION = 4;
