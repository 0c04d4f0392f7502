// The dashboard's router: the path names the page; links are followed without a reload
// and every page is a URL that survives one.

import { get } from "./api.js";
import { t, translate } from "./i18n.js";
import { captureDialog, commandPalette, pages, setRole } from "./pages.js";

// The shell's own words (the header, the dialogs) in the language, before anything is drawn.
translate(document);

const main = document.getElementById("main");
let leave = null;

function route(path) {
  if (path === "/") return ["home", {}];
  const memory = path.match(/^\/memories\/([^/]+)$/);
  if (memory) return ["memory", { id: decodeURIComponent(memory[1]) }];
  const entity = path.match(/^\/(?:people|entities)\/([^/]+)$/);
  if (entity) return ["entity", { id: decodeURIComponent(entity[1]) }];
  const name = path.slice(1);
  return [name in pages ? name : "missing", { path }];
}

let role = null;
const notice = document.getElementById("notice");
notice.querySelector("button").addEventListener("click", () => { notice.hidden = true; });
const captureFor = captureDialog();
commandPalette();

async function show() {
  if (role === null) {
    // Asks for a token first when the server needs one; the role decides the buttons.
    try {
      role = (await get("/api/health")).role;
    } catch (error) {
      if (error.status === 401) {
        // A refused token is not a viewer's: say so and ask again (it once left the page
        // read-only until a reload).
        const again = document.createElement("button");
        again.className = "primary";
        again.textContent = t("app.token.again");
        again.addEventListener("click", show);
        const box = document.createElement("p");
        box.className = "error";
        box.append(t("app.token.refused"), again);
        main.replaceChildren(box);
        again.focus();
        return;
      }
      role = "viewer";
    }
    setRole(role);
    captureFor(role !== "viewer");
  }
  if (leave) leave();
  leave = null;
  const [name, params] = route(location.pathname);
  for (const link of document.querySelectorAll("nav a")) {
    const href = link.getAttribute("href");
    // A person's page is under People.
    const here = href === location.pathname || (href !== "/" && location.pathname.startsWith(`${href}/`));
    if (here) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
  main.replaceChildren();
  try {
    leave = (await pages[name](main, params, new URLSearchParams(location.search))) || null;
    // The tab names the page (a person with five levh tabs open tells them apart).
    const heading = main.querySelector("h1");
    document.title = heading ? t("app.title", { page: heading.textContent }) : "levh";
  } catch (error) {
    const box = document.createElement("p");
    box.className = "error";
    box.textContent = error.message;
    main.replaceChildren(box);
  }
}

document.addEventListener("click", (event) => {
  const link = event.target.closest("a");
  // A download (an export's blob: link has this page's origin) is the browser's.
  if (!link || link.hasAttribute("download") || !/^https?:$/.test(link.protocol) || link.origin !== location.origin
    || link.target || event.ctrlKey || event.metaKey) return;
  // A link within the page (the skip link to #main) is the browser's to follow: it moves
  // the focus there, which a re-render would not.
  if (link.pathname === location.pathname && link.hash) return;
  event.preventDefault();
  history.pushState({}, "", link.href);
  show();
});
window.addEventListener("popstate", show);
show();
