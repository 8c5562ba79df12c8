// What a screen reader hears and where the keyboard goes: one polite live
// region for the whole page (announce), and focus moved on purpose after an
// action removes the focused control (moveFocusAfterAction).
// docs/decisions/2026-12-06-web-ui-accessibility.md
import { useEffect, useState } from "react";

type Listener = (message: string) => void;
const listeners = new Set<Listener>();

/** Says `message` through the page's polite live region (the latest message wins). */
export function announce(message: string): void {
  const text = message.trim();
  if (text === "") return;
  for (const listener of listeners) listener(text);
}

/** How long an announcement stays in the region (a screen reader reads it when it is added). */
const announcementLifetimeMs = 15_000;

/**
 * The page's live region: each message is added as its own line, so two
 * that come together (a new approval and the status it brings) are both
 * read, and removed again after a while.
 */
export function LiveAnnouncer() {
  const [messages, setMessages] = useState<readonly { key: number; text: string }[]>([]);
  useEffect(() => {
    let next = 0;
    const timers = new Set<number>();
    const listener: Listener = (text) => {
      const key = next++;
      setMessages((previous) => [...previous.slice(-4), { key, text }]);
      const timer = window.setTimeout(() => {
        timers.delete(timer);
        setMessages((previous) => previous.filter((message) => message.key !== key));
      }, announcementLifetimeMs);
      timers.add(timer);
    };
    listeners.add(listener);
    return () => {
      listeners.delete(listener);
      for (const timer of timers) window.clearTimeout(timer);
    };
  }, []);
  return (
    <div className="visually-hidden" role="status" aria-live="polite" aria-relevant="additions" data-testid="live-announcer">
      {messages.map((message) => <p key={message.key}>{message.text}</p>)}
    </div>
  );
}

/** The selector of the controls that take focus first after an action: the first answer of each pending card. */
export const nextPendingSelector = "[data-focus-next]:not(:disabled)";

function composer(sessionId?: string): HTMLTextAreaElement | null {
  const element = document.querySelector<HTMLTextAreaElement>(sessionId === undefined ? "[data-testid=composer-input]" : `[data-testid=composer-input][data-session-id="${CSS.escape(sessionId)}"]`);
  return element !== null && !element.disabled ? element : null;
}

/**
 * Focuses the message box (of `sessionId`, when given) once it is there: a
 * new session mounts it after its chat loads. False when it never came.
 */
export function focusComposerWhenReady(sessionId?: string, timeoutMs = 10_000): Promise<boolean> {
  const until = Date.now() + timeoutMs;
  return new Promise((resolve) => {
    const attempt = (): void => {
      const element = composer(sessionId);
      if (element !== null) {
        element.focus();
        resolve(true);
      } else if (Date.now() > until) resolve(false);
      else window.requestAnimationFrame(attempt);
    };
    attempt();
  });
}

/**
 * Moves focus to the next sensible place after an action that removes the
 * focused control (an approval, an answer, a stop): the next pending card's
 * first answer, else the message box, else the session's heading. It waits
 * a frame for React to render the action's result.
 */
export function moveFocusAfterAction(): void {
  // At once, before React removes the control: a frame with the focus on <body> sends the next Tab to the top of the page.
  const from = document.activeElement;
  const card = from?.closest(cardSelector) ?? null;
  const next = [...document.querySelectorAll<HTMLElement>(nextPendingSelector)].find((candidate) => card === null || !card.contains(candidate))
    ?? composer() ?? document.querySelector<HTMLElement>("#workspace-heading");
  next?.focus();
}

/** The cards a decision is made in: the next pending control is looked for outside the one just answered. */
const cardSelector = "[data-testid=tool-card], [data-testid=question-card], [data-testid=plan-view]";

/**
 * Keeps the focus in the page when a re-render removes the focused control
 * without a person acting (a Stop button that goes when the turn ends, a
 * card another tab answered): it moves as after an action. A control the
 * person left on purpose (a click on plain text) is still in the page, so
 * the focus stays where the browser put it. Returns the uninstaller.
 */
export function keepFocusInPage(): () => void {
  let last: Element | null = null;
  const onFocusIn = (event: FocusEvent): void => {
    last = event.target instanceof Element ? event.target : null;
  };
  const observer = new MutationObserver(() => {
    const active = document.activeElement;
    if (last === null || last.isConnected || (active !== null && active !== document.body)) return;
    last = null;
    moveFocusAfterAction();
  });
  document.addEventListener("focusin", onFocusIn);
  observer.observe(document.body, { childList: true, subtree: true });
  return () => {
    document.removeEventListener("focusin", onFocusIn);
    observer.disconnect();
  };
}
