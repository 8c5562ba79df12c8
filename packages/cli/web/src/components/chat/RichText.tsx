// Model text with the little Markdown models use most (paragraphs, lists,
// code, bold), rendered as React elements: never as HTML.
import type { ReactNode } from "react";

function inline(text: string, keyPrefix: string): ReactNode[] {
  const nodes: ReactNode[] = [];
  const pattern = /(`[^`\n]+`|\*\*[^*\n]+\*\*)/g;
  let last = 0;
  let index = 0;
  for (const match of text.matchAll(pattern)) {
    const start = match.index;
    if (start > last) nodes.push(text.slice(last, start));
    const token = match[0];
    if (token.startsWith("`")) nodes.push(<code key={`${keyPrefix}-${index++}`}>{token.slice(1, -1)}</code>);
    else nodes.push(<strong key={`${keyPrefix}-${index++}`}>{token.slice(2, -2)}</strong>);
    last = start + token.length;
  }
  if (last < text.length) nodes.push(text.slice(last));
  return nodes;
}

export function RichText(props: { text: string; streaming?: boolean }) {
  const blocks: ReactNode[] = [];
  const segments = props.text.split(/```/);
  segments.forEach((segment, segmentIndex) => {
    if (segmentIndex % 2 === 1) {
      const firstNewline = segment.indexOf("\n");
      const code = firstNewline === -1 ? segment : segment.slice(firstNewline + 1);
      blocks.push(<pre key={`code-${segmentIndex}`} className="code-block">{code.replace(/\n$/, "")}</pre>);
      return;
    }
    const paragraphs = segment.split(/\n{2,}/);
    paragraphs.forEach((paragraph, paragraphIndex) => {
      if (paragraph.trim() === "") return;
      const key = `${segmentIndex}-${paragraphIndex}`;
      const lines = paragraph.split("\n");
      if (lines.every((line) => /^\s*([-*]|\d+\.)\s+/.test(line) || line.trim() === "")) {
        const ordered = /^\s*\d+\./.test(lines[0] ?? "");
        const items = lines.filter((line) => line.trim() !== "").map((line, itemIndex) => <li key={itemIndex}>{inline(line.replace(/^\s*([-*]|\d+\.)\s+/, ""), `${key}-${itemIndex}`)}</li>);
        blocks.push(ordered ? <ol key={key}>{items}</ol> : <ul key={key}>{items}</ul>);
        return;
      }
      blocks.push(
        <p key={key}>
          {lines.flatMap((line, lineIndex) => (lineIndex === 0 ? inline(line, `${key}-${lineIndex}`) : [<br key={`br-${lineIndex}`} />, ...inline(line, `${key}-${lineIndex}`)]))}
        </p>,
      );
    });
  });
  return (
    <div className={`rich-text${props.streaming === true ? " streaming" : ""}`} data-testid="message-text">
      {blocks}
    </div>
  );
}
