"use client";
// What an agent wrote, as Markdown: emphasis, lists, code and links, never raw
// HTML (react-markdown escapes it) and never a javascript: link.
import ReactMarkdown from "react-markdown";

export function AgentMarkdown({ text }: { text: string }) {
  return (
    <div className="space-y-2 text-sm break-words [&_a]:underline [&_code]:rounded [&_code]:bg-slate-100 [&_code]:px-1 [&_code]:font-mono [&_code]:text-xs [&_li]:ml-4 [&_ol]:list-decimal [&_pre]:overflow-x-auto [&_pre]:rounded [&_pre]:bg-slate-100 [&_pre]:p-2 [&_ul]:list-disc">
      <ReactMarkdown components={{ a: ({ href, children }) => <a href={href} target="_blank" rel="noopener noreferrer nofollow">{children}</a> }}>{text}</ReactMarkdown>
    </div>
  );
}
