;;; check.el --- what tests/editors/test_emacs.py asks of a real Emacs with eglot  -*- lexical-binding: t; -*-
;; Run as: emacs --batch -q -l editors/emacs/lsp-agent.el -l tests/editors/emacs/check.el FILE OUT
;; Opens FILE with lsp-agent as its eglot server and writes what Emacs saw to OUT (JSON).

(require 'json)
(require 'imenu)
(require 'xref)

(defun check--wait (what condition)
  "Wait up to 60 s for CONDITION (a function), else fail naming WHAT."
  (let ((deadline (+ (float-time) 60)))
    (while (not (funcall condition))
      (when (> (float-time) deadline) (error "timed out waiting for %s" what))
      (accept-process-output nil 0.05))))

(let* ((file (nth 0 command-line-args-left))
       (out (nth 1 command-line-args-left))
       (results nil))
  (setq command-line-args-left nil)
  (setq lsp-agent-initialization-options '(:max_chars 2000 :standardNavigation t))
  (lsp-agent-eglot-setup 'python-mode)
  (find-file file)
  (apply #'eglot (eglot--guess-contact))
  (check--wait "eglot to connect" (lambda () (eglot-current-server)))
  ;; documentSymbol, as imenu shows it
  (push (cons "imenu" (format "%S" (funcall imenu-create-index-function))) results)
  ;; a custom request
  (push (cons "read" (plist-get (lsp-agent-request "read" :path file :max_chars 400) :text)) results)
  ;; M-. on a use (textDocument/definition, opted in)
  (goto-char (point-min))
  (search-forward "cart.total")
  (backward-char 3)
  (let ((found (xref-backend-definitions (xref-find-backend) (xref-backend-identifier-at-point (xref-find-backend)))))
    (push (cons "definition"
                (mapcar (lambda (item)
                          (let ((location (xref-item-location item)))
                            (format "%s:%d" (file-name-nondirectory (xref-location-group location))
                                    (xref-location-line location))))
                        found))
          results))
  ;; an unsaved edit, seen by search
  (goto-char (point-max))
  (insert "\n\ndef unsaved_helper():\n    return 42\n")
  (push (cons "search" (plist-get (lsp-agent-request "search" :pattern "unsaved_helper") :text)) results)
  (push (cons "modified" (if (buffer-modified-p) "yes" "no")) results)
  (with-temp-file out (insert (json-encode results)))
  (set-buffer-modified-p nil)
  (eglot-shutdown (eglot-current-server))
  (kill-emacs 0))
