// A few inline SVG icons (no icon font, no emoji: both depend on the fonts installed).
const common = { width: 14, height: 14, viewBox: "0 0 24 24", fill: "none", stroke: "currentColor", strokeWidth: 2, strokeLinecap: "round", strokeLinejoin: "round", "aria-hidden": true } as const;

export const PlusIcon = () => (
  <svg {...common}><path d="M12 5v14M5 12h14" /></svg>
);

export const ToolIcon = () => (
  <svg {...common}><path d="M14.7 6.3a4 4 0 0 0-5.4 5.4L3 18l3 3 6.3-6.3a4 4 0 0 0 5.4-5.4l-2.5 2.5-2.4-.6-.6-2.4z" /></svg>
);

export const ShieldIcon = () => (
  <svg {...common}><path d="M12 3l7 3v6c0 4.5-3 7.5-7 9-4-1.5-7-4.5-7-9V6z" /><path d="M12 8v4M12 16h.01" /></svg>
);

export const ClockIcon = () => (
  <svg {...common}><circle cx="12" cy="12" r="9" /><path d="M12 7v5l3 2" /></svg>
);

export const AlertIcon = () => (
  <svg {...common} width={12} height={12}><path d="M12 3l10 18H2z" /><path d="M12 10v4M12 18h.01" /></svg>
);

export const CheckIcon = () => (
  <svg {...common} width={11} height={11} strokeWidth={3}><path d="M5 12l5 5 9-10" /></svg>
);

export const ListIcon = () => (
  <svg {...common} width={12} height={12}><path d="M9 6h11M9 12h11M9 18h11M4 6h.01M4 12h.01M4 18h.01" /></svg>
);

export const QuestionIcon = () => (
  <svg {...common}><circle cx="12" cy="12" r="9" /><path d="M9.5 9.5a2.5 2.5 0 1 1 3.5 2.3c-.6.3-1 .9-1 1.6v.6M12 17h.01" /></svg>
);
