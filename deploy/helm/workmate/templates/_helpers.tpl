{{/*
Names. Kubernetes names are at most 63 characters; suffixed names are cut to fit too.
*/}}
{{- define "workmate.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "workmate.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* "<fullname>-<suffix>", within 63 characters. Call with (list . "suffix"). */}}
{{- define "workmate.suffixed" -}}
{{- $root := index . 0 }}
{{- $suffix := index . 1 }}
{{- printf "%s-%s" (include "workmate.fullname" $root | trunc (int (sub 62 (len $suffix))) | trimSuffix "-") $suffix }}
{{- end }}

{{- define "workmate.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The release's labels: every resource of the chart has them. */}}
{{- define "workmate.instanceLabels" -}}
app.kubernetes.io/name: {{ include "workmate.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/*
The serving pods' labels, which the Deployment, the Service and the budget select on. The
component keeps the migration Job's pod (component: migration) out of the Service and budget.
*/}}
{{- define "workmate.selectorLabels" -}}
{{ include "workmate.instanceLabels" . }}
app.kubernetes.io/component: server
{{- end }}

{{- define "workmate.labels" -}}
helm.sh/chart: {{ include "workmate.chart" . }}
{{ include "workmate.instanceLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "workmate.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "workmate.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "workmate.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}

{{/* The Secret the workmate pods read: the operator's, or the chart's. */}}
{{- define "workmate.secretName" -}}
{{- default (include "workmate.fullname" .) .Values.secrets.existingSecret }}
{{- end }}

{{/*
The chart's Secret data, shared by the release's Secret and the migration hook's copy so the two
cannot drift. Fails the render when a required credential is missing or too short.
*/}}
{{- define "workmate.secretData" -}}
{{- $token := required "secrets.adminToken is required (or secrets.existingSecret)" .Values.secrets.adminToken }}
{{- if lt (len (trim $token)) 16 }}
{{- fail "secrets.adminToken must be at least 16 characters" }}
{{- end }}
admin-token: {{ $token | b64enc | quote }}
database-url: {{ required "secrets.databaseUrl is required (or secrets.existingSecret)" .Values.secrets.databaseUrl | b64enc | quote }}
{{- with .Values.secrets.vaultKey }}
vault-key: {{ . | b64enc | quote }}
{{- end }}
{{- with .Values.secrets.sessionKey }}
session-key: {{ . | b64enc | quote }}
{{- end }}
{{- end }}

{{/* workmate.toml, shared by the release's ConfigMap and the migration hook's copy. */}}
{{- define "workmate.configData" -}}
workmate.toml: |
{{- .Values.config | nindent 2 }}
{{- end }}

{{/* The extra environment's `data`, shared likewise. */}}
{{- define "workmate.envData" -}}
{{- if .Values.env }}
data:
  {{- range $name, $value := .Values.env }}
  {{ $name }}: {{ $value | toString | quote }}
  {{- end }}
{{- else }}
data: {}
{{- end }}
{{- end }}

{{/*
The workmate container's environment. Call with (dict "root" . "secret" NAME "env" NAME): the
Secret and the env ConfigMap to read (the migration hook passes its own copies).
*/}}
{{- define "workmate.containerEnv" -}}
{{- $root := .root }}
env:
  - name: WORKMATE__SERVER__ADMIN_TOKEN
    valueFrom:
      secretKeyRef: {name: {{ .secret | quote }}, key: admin-token}
  - name: WORKMATE__DATABASE__URL
    valueFrom:
      secretKeyRef: {name: {{ .secret | quote }}, key: database-url}
  - name: WORKMATE_VAULT_KEY
    valueFrom:
      secretKeyRef: {name: {{ .secret | quote }}, key: vault-key, optional: true}
  # The holder name of this pod's session and connection leases: unique and, for a pod, stable.
  - name: WORKMATE__SERVER__REPLICA_ID
    valueFrom:
      fieldRef: {fieldPath: metadata.name}
  {{- if not $root.Values.sandbox.enabled }}
  # sandbox.enabled=false: run_shell runs commands UNSANDBOXED. See values.yaml.
  - name: WORKMATE__TOOLS__SHELL_SANDBOX
    value: none
  {{- end }}
  {{- with $root.Values.extraEnv }}
  {{- toYaml . | nindent 2 }}
  {{- end }}
envFrom:
  - configMapRef:
      name: {{ .env | quote }}
  {{- with $root.Values.extraEnvFrom }}
  {{- toYaml . | nindent 2 }}
  {{- end }}
{{- end }}

{{/* The pod securityContext, with hostUsers beside it in the pod spec. */}}
{{- define "workmate.podSecurity" -}}
{{- if not (kindIs "invalid" .Values.hostUsers) }}
hostUsers: {{ .Values.hostUsers }}
{{- end }}
securityContext:
  {{- toYaml .Values.podSecurityContext | nindent 2 }}
{{- end }}
