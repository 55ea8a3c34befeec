// Text a framework writes (a question, a tool's description, a model's reason)
// goes to the operator as it is, but within the server's limits: cut, marked as
// cut, rather than refused and the run failed.
export const SUMMARY_CHARS = 20_000;
export const REASON_CHARS = 10_000;

export function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
