// The REST API, as the dashboard calls it. The token (when the server needs one) lives in
// sessionStorage: it is asked for once per tab and never put in a URL, except the
// WebSocket's, which cannot carry a header.

import { t } from "./i18n.js";

const KEY = "levh-token";

export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

function headers(extra) {
  const h = { "X-LEVH-Client": "dashboard", ...extra };
  const token = sessionStorage.getItem(KEY);
  if (token) h["Authorization"] = `Bearer ${token}`;
  return h;
}

/// Asks for a token in the dialog; resolves when one was given.
function askForToken() {
  const dialog = document.getElementById("token");
  return new Promise((resolve) => {
    dialog.addEventListener(
      "close",
      () => {
        const value = dialog.querySelector("input").value.trim();
        if (value) sessionStorage.setItem(KEY, value);
        resolve();
      },
      { once: true },
    );
    dialog.showModal();
  });
}

/// One call; a 401 asks for a token and tries once more. Errors carry the API's message.
export async function call(method, path, body) {
  for (let attempt = 0; attempt < 2; attempt++) {
    const response = await fetch(path, {
      method,
      headers: headers(body === undefined ? {} : { "Content-Type": "application/json" }),
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (response.status === 401 && attempt === 0) {
      sessionStorage.removeItem(KEY);
      await askForToken();
      continue;
    }
    const text = await response.text();
    const json = text ? JSON.parse(text) : null;
    if (!response.ok) {
      throw new ApiError(response.status, (json && json.error) || `${response.status} ${response.statusText}`);
    }
    return json;
  }
  throw new ApiError(401, t("api.token.needed"));
}

export const get = (path) => call("GET", path);
export const post = (path, body = {}) => call("POST", path, body);

/// The live feed's WebSocket URL (the token as a query parameter, the only way a browser
/// WebSocket can present one).
export function feedUrl() {
  const url = new URL("/api/ws", location.href);
  url.protocol = location.protocol === "https:" ? "wss:" : "ws:";
  const token = sessionStorage.getItem(KEY);
  if (token) url.searchParams.set("token", token);
  return url.toString();
}
