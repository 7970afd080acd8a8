;;; lsp_mode.el --- lsp-mode with lsp-agent as an add-on server, for tests/editors/test_emacs.py  -*- lexical-binding: t; -*-
;; Run as: emacs --batch -q -l tests/editors/emacs/lsp_mode.el SNIPPET FILE OUT
;; SNIPPET is docs/editors.md's lsp-mode block, loaded as a user would have it in their init.

(require 'json)
(require 'lsp-mode)

(let ((snippet (nth 0 command-line-args-left))
      (file (nth 1 command-line-args-left))
      (out (nth 2 command-line-args-left))
      (results nil))
  (setq command-line-args-left nil)
  (setq lsp-enable-file-watchers nil lsp-enable-snippet nil lsp-auto-guess-root t lsp-restart 'ignore
        lsp-session-file (expand-file-name "lsp-session" (file-name-directory out)))
  (load snippet)
  ;; The user's own server of the language: another lsp-agent stands in for pyright here.
  (lsp-register-client
   (make-lsp-client :new-connection (lsp-stdio-connection '("lsp-agent" "serve"))
                    :activation-fn (lsp-activate-on "python") :server-id 'users-own))
  (find-file file)
  (lsp)
  (let ((deadline (+ (float-time) 60)))
    (while (< (length (seq-filter (lambda (w) (eq (lsp--workspace-status w) 'initialized)) (lsp-workspaces))) 2)
      (when (> (float-time) deadline) (error "timed out waiting for both servers"))
      (accept-process-output nil 0.05)))
  (push (cons "servers" (mapcar (lambda (w) (symbol-name (lsp--client-server-id (lsp--workspace-client w))))
                                (lsp-workspaces)))
        results)
  (goto-char (point-max))
  (insert "\n\ndef unsaved_helper():\n    return 42\n")
  (push (cons "search" (my/lsp-agent "search" :pattern "unsaved_helper")) results)
  (with-temp-file out (insert (json-encode results)))
  (set-buffer-modified-p nil)
  (kill-emacs 0))
