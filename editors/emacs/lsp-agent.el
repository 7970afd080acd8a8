;;; lsp-agent.el --- lsp-agent's agent tools in Emacs, through eglot  -*- lexical-binding: t; -*-

;; Version: 0.1.0
;; Package-Requires: ((emacs "28.1") (eglot "1.9"))
;; Keywords: tools, languages

;;; Commentary:

;; lsp-agent is a language server that serves tools to AI coding agents.  eglot gives
;; documentSymbol (imenu), workspace/symbol and, with the initialization option
;; `standardNavigation', definitions and references; this file adds the agent tools as
;; commands: each sends the custom request `lspAgent/<tool>' to the buffer's eglot server
;; (after any unsaved edit) and shows the answer's text, what an agent would read.
;;
;;   (require 'lsp-agent)
;;   (lsp-agent-eglot-setup 'python-mode 'js-mode)   ; lsp-agent serves these modes
;;   M-x eglot, then M-x lsp-agent-search, lsp-agent-find-symbol, lsp-agent-read, …

;;; Code:

(require 'eglot)
(require 'jsonrpc)

(defgroup lsp-agent nil
  "lsp-agent's agent tools."
  :group 'tools)

(defcustom lsp-agent-command '("lsp-agent" "serve")
  "The command that starts the server (`lsp-agent' from PATH by default)."
  :type '(repeat string))

(defcustom lsp-agent-initialization-options '(:max_chars 20000)
  "The server's initializationOptions (max_chars, standardNavigation, …)."
  :type 'plist)

(defun lsp-agent-eglot-setup (&rest modes)
  "Let eglot start lsp-agent for MODES (major modes without a language server of their own)."
  (let ((contact `(,@lsp-agent-command :initializationOptions ,lsp-agent-initialization-options)))
    (dolist (mode modes)
      (setf (alist-get mode eglot-server-programs nil nil #'equal) contact))))

(defun lsp-agent-request (tool &rest arguments)
  "Call TOOL with ARGUMENTS (a plist) on this buffer's eglot server; the answer, a plist."
  (let ((server (eglot--current-server-or-lose)))
    (eglot--signal-textDocument/didChange)  ; the tool sees the buffer as it is now
    (jsonrpc-request server (intern (format ":lspAgent/%s" tool)) arguments)))

(defun lsp-agent--show (tool answer)
  "Show ANSWER's text of TOOL in the *lsp-agent* buffer."
  (with-current-buffer (get-buffer-create "*lsp-agent*")
    (let ((inhibit-read-only t))
      (erase-buffer)
      (insert (plist-get answer :text))
      (goto-char (point-min)))
    (setq-local header-line-format (format "lsp-agent %s" tool))
    (view-mode 1)
    (display-buffer (current-buffer))))

(defun lsp-agent-call (tool &rest arguments)
  "Call TOOL with ARGUMENTS and show its answer."
  (lsp-agent--show tool (apply #'lsp-agent-request tool arguments)))

(defun lsp-agent-search (pattern)
  "Search the workspace for PATTERN (a ripgrep regex)."
  (interactive "sSearch (regex): ")
  (lsp-agent-call "search" :pattern pattern))

(defun lsp-agent-find-symbol (name)
  "Find the definitions of NAME (a name or a name path: Class/method)."
  (interactive "sFind symbol: ")
  (lsp-agent-call "find_symbol" :name_path name))

(defun lsp-agent-references (name)
  "Every use of NAME across the workspace, each with its role."
  (interactive (list (read-string "References of: " (thing-at-point 'symbol t))))
  (lsp-agent-call "references" :name name))

(defun lsp-agent-symbols ()
  "The outline of this file."
  (interactive)
  (lsp-agent-call "symbols" :path (buffer-file-name)))

(defun lsp-agent-read (path)
  "Read PATH as an agent does, in pages with their continuation."
  (interactive (list (read-file-name "Read: " nil (buffer-file-name))))
  (lsp-agent-call "read" :path (expand-file-name path)))

(provide 'lsp-agent)
;;; lsp-agent.el ends here
