// The verify page: SHA-256 of a reveal in this browser (Web Crypto), compared with the commitment kept.
// The reveal is hashed exactly as the table hashed it: its UTF-8 bytes, lines joined by "\n", no final newline.
"use strict";
(function () {
  const form = document.getElementById("verify");
  if (!form) return;
  const show = (id) => {
    for (const el of form.querySelectorAll(".verdict")) el.hidden = el.id !== id;
  };
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const commitment = form.elements.commitment.value.trim().toLowerCase();
    const reveal = form.elements.reveal.value.replace(/\r\n?/g, "\n").replace(/\n+$/, "");
    if (!window.crypto || !window.crypto.subtle) {
      show("verify-nocrypto");
      return;
    }
    const digest = await window.crypto.subtle.digest("SHA-256", new TextEncoder().encode(reveal));
    const hex = Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
    form.elements.computed.value = hex;
    show(hex === commitment ? "verify-ok" : "verify-bad");
  });
})();
