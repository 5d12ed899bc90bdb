// UI text of the player in English and Chinese; `lang` is a Django language code ("en", "zh-hans").
// Kept as a small catalogue here (no build step, no server round trip) so the player works standalone.

const MESSAGES = {
  en: {
    thinking: "Thinking…",
    thinking_for: "Thinking for {n} s",
    thought_for: "Thought for {n} s",
    elapsed: "Elapsed: {n} s",
    eta: "About {n} s left",
    eta_soon: "Almost there…",
    waiting: "Waiting…",
    loading: "Loading answer",
  },
  "zh-hans": {
    thinking: "思考中…",
    thinking_for: "已思考 {n} 秒",
    thought_for: "思考用时 {n} 秒",
    elapsed: "已用时 {n} 秒",
    eta: "预计还需 {n} 秒",
    eta_soon: "马上就好…",
    waiting: "请稍候…",
    loading: "正在加载回答",
  },
};

/** The catalogue for `lang`: "zh", "zh-hans", "zh-cn" map to Chinese, anything else to English. */
export function catalogue(lang) {
  const code = String(lang || "en").toLowerCase();
  return code.startsWith("zh") ? MESSAGES["zh-hans"] : MESSAGES.en;
}

/** Translate `key` into `lang`, filling `{name}` placeholders from `params`. */
export function t(lang, key, params = {}) {
  const text = catalogue(lang)[key];
  if (text === undefined) throw new Error(`pacelab i18n: unknown message ${key}`);
  return text.replace(/\{(\w+)\}/g, (_, name) => String(params[name]));
}

export const LANGUAGES = Object.keys(MESSAGES);
