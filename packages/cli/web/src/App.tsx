// The `perdure dev` web UI: sessions on the left, the open session's chat and
// inspector on the right. The open session lives in the URL
// (/sessions/<id>), so a reload comes back to it.
import { useCallback, useEffect, useRef, useState } from "react";
import { focusComposerWhenReady, keepFocusInPage, LiveAnnouncer } from "./lib/a11y.tsx";
import { SessionList } from "./components/SessionList.tsx";
import { SessionWorkspace, type LayoutMode } from "./components/SessionWorkspace.tsx";
import type { InspectorTab } from "./components/inspector/Inspector.tsx";
import type { SessionAttention } from "./components/StatusBadge.tsx";
import { api } from "./lib/api.ts";
import { usePolledResource } from "./lib/hooks.ts";

function sessionFromLocation(): string | null {
  const match = /^\/sessions\/([^/]+)\/?$/.exec(window.location.pathname);
  return match?.[1] === undefined ? null : decodeURIComponent(match[1]);
}

function stored<T extends string>(key: string, allowed: readonly T[], fallback: T): T {
  const value = window.localStorage.getItem(key);
  return allowed.includes(value as T) ? (value as T) : fallback;
}

function initialLayout(): LayoutMode {
  const query = new URLSearchParams(window.location.search).get("layout");
  if (query === "chat" || query === "split" || query === "inspector") return query;
  return stored("perdure.layout", ["chat", "split", "inspector"], "split");
}

function initialTab(): InspectorTab {
  const query = new URLSearchParams(window.location.search).get("tab");
  if (query === "overview" || query === "state" || query === "events") return query;
  return stored("perdure.inspectorTab", ["overview", "state", "events"], "overview");
}

export function App() {
  const [selected, setSelected] = useState<string | null>(sessionFromLocation);
  const [layout, setLayout] = useState<LayoutMode>(initialLayout);
  const [tab, setTab] = useState<InspectorTab>(initialTab);
  const sessions = usePolledResource("sessions", () => api.sessions(), 2000);
  const agents = usePolledResource("agents", () => api.agents(), 60_000);
  const { refresh: refreshSessions } = sessions;
  const [attention, setAttention] = useState<Readonly<Record<string, SessionAttention>>>({});
  const onAttention = useCallback((sessionId: string, value: SessionAttention) => {
    setAttention((previous) => {
      const current = previous[sessionId];
      const same = current?.approvals === value.approvals && current?.questions === value.questions && current?.waitUntil === value.waitUntil;
      return same ? previous : { ...previous, [sessionId]: value };
    });
  }, []);

  useEffect(() => keepFocusInPage(), []);

  useEffect(() => {
    const onPop = (): void => setSelected(sessionFromLocation());
    window.addEventListener("popstate", onPop);
    return () => window.removeEventListener("popstate", onPop);
  }, []);

  // Below 720 px the session list hides behind the menu button (styles.css), as a drawer.
  const [menuOpen, setMenuOpen] = useState(false);
  const menuButton = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    if (menuOpen) document.querySelector<HTMLElement>("#session-list .new-session")?.focus();
  }, [menuOpen]);
  const closeMenu = useCallback((returnFocus: boolean) => {
    setMenuOpen(false);
    if (returnFocus) menuButton.current?.focus();
  }, []);

  const select = useCallback((sessionId: string | null) => {
    setMenuOpen(false);
    const path = sessionId === null ? "/" : `/sessions/${encodeURIComponent(sessionId)}`;
    if (window.location.pathname !== path) window.history.pushState(null, "", path + window.location.search);
    setSelected(sessionId);
  }, []);

  // Open the newest session when none is chosen.
  useEffect(() => {
    const first = sessions.data?.sessions[0];
    if (selected === null && first !== undefined) {
      window.history.replaceState(null, "", `/sessions/${encodeURIComponent(first.sessionId)}${window.location.search}`);
      setSelected(first.sessionId);
    }
  }, [selected, sessions.data]);

  const create = async (agent: string | undefined): Promise<void> => {
    const created = await api.createSession(agent);
    select(created.sessionId);
    refreshSessions();
    // The new session's message box, once its chat has loaded: the button that made it stays, so focus never drops meanwhile.
    void focusComposerWhenReady(created.sessionId);
  };

  const changeLayout = (mode: LayoutMode): void => {
    window.localStorage.setItem("perdure.layout", mode);
    setLayout(mode);
  };
  const changeTab = (next: InspectorTab): void => {
    window.localStorage.setItem("perdure.inspectorTab", next);
    setTab(next);
  };

  const summary = sessions.data?.sessions.find((session) => session.sessionId === selected);
  const agentNames = agents.data?.agents ?? [];

  return (
    <div className="app">
      <a
        className="skip-link"
        href="#composer-input"
        onClick={(event) => {
          event.preventDefault();
          const composer = document.getElementById("composer-input");
          if (composer !== null && !(composer as HTMLTextAreaElement).disabled) composer.focus();
          else document.getElementById("main-content")?.focus();
        }}
      >
        Skip to the message box
      </a>
      <LiveAnnouncer />
      <header className="topbar">
        <button
          type="button"
          ref={menuButton}
          className="menu-button"
          aria-expanded={menuOpen}
          aria-controls="session-list"
          onClick={() => (menuOpen ? closeMenu(false) : setMenuOpen(true))}
        >
          <span className="menu-icon" aria-hidden="true" /> Sessions
        </button>
        <a className="brand" href="/" onClick={(event) => { event.preventDefault(); select(null); }}>
          <span className="brand-mark" aria-hidden="true">P</span>
          <span className="brand-name">perdure</span>
          <span className="brand-sub">dev</span>
        </a>
        <span className="topbar-agents muted small">{agentNames.length > 0 ? `hosting ${agentNames.join(", ")}` : ""}</span>
        <span className="spacer" />
        <span className={`server-state ${sessions.error === undefined ? "ok" : "down"}`} title={sessions.error?.message ?? "The dev server answers"}>
          <span className="live-dot" /> <span className="server-state-text">{sessions.error === undefined ? "server connected" : "server unreachable"}</span>
        </span>
      </header>
      <div className={`main${menuOpen ? " menu-open" : ""}`}>
        <SessionList open={menuOpen} onClose={() => closeMenu(true)} sessions={sessions.data?.sessions} error={sessions.error} agents={agentNames} selectedId={selected} attention={attention} onSelect={select} onCreate={create} />
        {selected === null ? (
          <main className="welcome" id="main-content" tabIndex={-1}>
            <h1>Durable agent sessions</h1>
            <p className="muted">Each session is a Flow: every model call, tool call and wait is a Step that survives restarts. Start a session to chat with the agent and watch its Steps.</p>
            <button type="button" className="button button-primary" onClick={() => void create(agentNames[0])}>New session</button>
          </main>
        ) : (
          <SessionWorkspace
            key={selected}
            sessionId={selected}
            summary={summary}
            layout={layout}
            onLayout={changeLayout}
            inspectorTab={tab}
            onInspectorTab={changeTab}
            onSessionsChanged={refreshSessions}
            onAttention={onAttention}
            onOpenSession={select}
          />
        )}
      </div>
    </div>
  );
}
