package controller

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/inferslo/inferslo/spec"
)

// WebhookPath is where the validating admission webhook is served.
const WebhookPath = "/validate-inferenceslo"

// maxReview bounds an AdmissionReview's body (the API server sends at most
// a few MiB).
const maxReview = 8 << 20

// Webhook is a validating admission webhook for InferenceSLO objects: it
// runs validate's checks (the loader and every backend, as Build does) and
// refuses a spec with errors with the message `inferslo validate` prints
// for the same spec; warnings are passed on as admission warnings.
type Webhook struct {
	Options Options
}

// ServeHTTP answers an admission.k8s.io/v1 AdmissionReview.
func (h Webhook) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxReview+1))
	if err != nil || len(body) > maxReview {
		http.Error(w, "admission review unreadable or over 8 MiB", http.StatusBadRequest)
		return
	}
	var review admissionv1.AdmissionReview
	if err := json.Unmarshal(body, &review); err != nil || review.Request == nil {
		http.Error(w, "not an admission.k8s.io/v1 AdmissionReview with a request", http.StatusBadRequest)
		return
	}
	resp := h.Review(review.Request)
	out := admissionv1.AdmissionReview{TypeMeta: review.TypeMeta, Response: resp}
	w.Header().Set("Content-Type", "application/json")
	if err := json.NewEncoder(w).Encode(out); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
	}
}

// Review decides one admission request.
func (h Webhook) Review(req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
	resp := &admissionv1.AdmissionResponse{UID: req.UID, Allowed: true}
	if req.Operation == admissionv1.Delete || len(req.Object.Raw) == 0 {
		return resp
	}
	obj := &unstructured.Unstructured{}
	if err := obj.UnmarshalJSON(req.Object.Raw); err != nil {
		return deny(resp, http.StatusBadRequest, fmt.Sprintf("read object: %v", err))
	}
	if obj.GetNamespace() == "" {
		obj.SetNamespace(req.Namespace)
	}
	d, err := Build(obj, h.Options)
	for _, p := range d.Problems {
		if p.Severity == spec.Warning {
			resp.Warnings = append(resp.Warnings, p.String())
		}
	}
	switch {
	case errors.Is(err, ErrInvalid):
		return deny(resp, http.StatusUnprocessableEntity, d.Problems.Errors().Report())
	case err != nil:
		return deny(resp, http.StatusInternalServerError, err.Error())
	}
	return resp
}

func deny(resp *admissionv1.AdmissionResponse, code int32, msg string) *admissionv1.AdmissionResponse {
	resp.Allowed = false
	resp.Warnings = nil
	resp.Result = &metav1.Status{Status: metav1.StatusFailure, Code: code, Reason: metav1.StatusReasonInvalid, Message: msg}
	return resp
}
