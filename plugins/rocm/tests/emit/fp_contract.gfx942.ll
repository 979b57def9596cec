; tilec rocm backend: amdgcn-amd-amdhsa for gfx942
source_filename = "tilec"
target datalayout = "e-p:64:64-p1:64:64-p2:32:32-p3:32:32-p4:64:64-p5:32:32-p6:32:32-p7:160:256:256:32-p8:128:128-p9:192:256:256:32-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-v2048:2048-n32:64-S32-A5-G1-ni:7:8:9"
target triple = "amdgcn-amd-amdhsa"

define amdgpu_kernel void @contract(ptr addrspace(1) %p0, ptr addrspace(1) %p1) #0 {
entry:
  %tid = call i32 @llvm.amdgcn.workitem.id.x(), !range !{i32 0, i32 64}
  %lane = and i32 %tid, 63
  %wave = lshr i32 %tid, 6
  %bid.x = call i32 @llvm.amdgcn.workgroup.id.x()
  %bid.y = call i32 @llvm.amdgcn.workgroup.id.y()
  %bid.z = call i32 @llvm.amdgcn.workgroup.id.z()
  %r0 = alloca float, addrspace(5)
  store float 0.0, ptr addrspace(5) %r0
  %r1 = alloca double, addrspace(5)
  store double 0.0, ptr addrspace(5) %r1
  %v0 = sext i32 %tid to i64
  %v1 = getelementptr inbounds float, ptr addrspace(1) %p0, i64 %v0
  %v2 = load float, ptr addrspace(1) %v1, align 4
  store float %v2, ptr addrspace(5) %r0
  %v3 = sext i32 %tid to i64
  %v4 = getelementptr inbounds double, ptr addrspace(1) %p1, i64 %v3
  %v5 = load double, ptr addrspace(1) %v4, align 8
  store double %v5, ptr addrspace(5) %r1
  %v6 = load float, ptr addrspace(5) %r0
  %v7 = fmul contract float %v6, 0x3FF8000000000000
  %v8 = load float, ptr addrspace(5) %r0
  %v9 = load float, ptr addrspace(5) %r0
  %v10 = fmul contract float %v8, %v9
  %v11 = fsub contract float %v7, %v10
  %v12 = load float, ptr addrspace(5) %r0
  %v13 = fsub contract float %v12, 0x4008000000000000
  %v14 = fdiv float %v11, %v13
  store float %v14, ptr addrspace(5) %r0
  %v15 = load double, ptr addrspace(5) %r1
  %v16 = load double, ptr addrspace(5) %r1
  %v17 = fmul double %v15, %v16
  %v18 = load double, ptr addrspace(5) %r1
  %v19 = fadd double %v17, %v18
  store double %v19, ptr addrspace(5) %r1
  %v20 = load float, ptr addrspace(5) %r0
  %v21 = sext i32 %tid to i64
  %v22 = getelementptr inbounds float, ptr addrspace(1) %p0, i64 %v21
  store float %v20, ptr addrspace(1) %v22, align 4
  %v23 = load double, ptr addrspace(5) %r1
  %v24 = sext i32 %tid to i64
  %v25 = getelementptr inbounds double, ptr addrspace(1) %p1, i64 %v24
  store double %v23, ptr addrspace(1) %v25, align 8
  ret void
}

declare i32 @llvm.amdgcn.workgroup.id.x()
declare i32 @llvm.amdgcn.workgroup.id.y()
declare i32 @llvm.amdgcn.workgroup.id.z()
declare i32 @llvm.amdgcn.workitem.id.x()

attributes #0 = { "amdgpu-flat-work-group-size"="64,64" "uniform-work-group-size"="true" "target-cpu"="gfx942" "denormal-fp-math"="ieee,ieee" "denormal-fp-math-f32"="ieee,ieee" }

!llvm.module.flags = !{!0}
!0 = !{i32 1, !"amdhsa_code_object_version", i32 500}
