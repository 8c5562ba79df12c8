// The per-session model picker: shown when the agent offers several models.
// A choice replaces the session's settings with `model` set; the running
// turn keeps its model and the next turn uses the new one.
import { useEffect, useState } from "react";
import { api } from "../lib/api.ts";

export interface ModelPickerProps {
  sessionId: string;
  /** The agent's `modelChoices`, the default first. */
  choices: readonly string[];
  /** The session's stored settings (`session_settings`). */
  settings: Record<string, unknown>;
  onChanged: () => void;
}

export function ModelPicker(props: ModelPickerProps) {
  const [saving, setSaving] = useState(false);
  const stored = props.settings.model;
  const storedChoice = typeof stored === "string" && props.choices.includes(stored) ? stored : (props.choices[0] ?? "");
  // The person's pick shows from the moment they make it until the session's settings change (the snapshot
  // that carries it is read up to 2 s later), rather than the old model flickering back in between.
  const [picked, setPicked] = useState<{ model: string; over: string } | null>(null);
  useEffect(() => {
    if (picked !== null && picked.over !== storedChoice) setPicked(null);
  }, [picked, storedChoice]);
  const current = picked?.model ?? storedChoice;
  const choose = async (model: string): Promise<void> => {
    setSaving(true);
    setPicked({ model, over: storedChoice });
    try {
      const { updated } = await api.updateSessionSettings(props.sessionId, { ...props.settings, model });
      if (!updated) {
        setPicked(null);
        window.alert("The session did not take the new model; it may have stopped.");
      }
    } catch (error) {
      setPicked(null);
      window.alert(`Could not change the model: ${error instanceof Error ? error.message : String(error)}`);
    } finally {
      setSaving(false);
      props.onChanged();
    }
  };
  return (
    <label className="model-picker small" title="The model of this session's next turn (session settings)">
      <span className="muted">Model</span>{" "}
      <select data-testid="model-picker" value={current} disabled={saving} onChange={(event) => void choose(event.target.value)}>
        {props.choices.map((choice) => (
          <option key={choice} value={choice}>{choice}</option>
        ))}
      </select>
    </label>
  );
}
