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
